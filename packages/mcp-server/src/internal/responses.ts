/**
 * An HTTP answer before it becomes a web `Response` or a Node write: the hot path writes it straight to
 * `node:http` (no Response, no Headers object); the web face converts it with {@link toResponse}.
 */
export interface Reply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body: string | ReadableStream<Uint8Array> | null;
}

const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json' };

/** A JSON body with status 200 (or `status`). */
export function jsonReply(body: string, status = 200): Reply {
  return { status, headers: JSON_HEADERS, body };
}

/** A JSON-RPC error answer with an HTTP status, as every entry-level refusal is answered. */
export function jsonRpcErrorReply(
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: string | number | null = null,
  headers?: Record<string, string>,
): Reply {
  const error = data === undefined ? { code, message } : { code, message, data };
  return {
    status,
    headers: headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, error }),
  };
}

/** A plain-text answer. */
export function textReply(status: number, text: string, headers?: Record<string, string>): Reply {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers }, body: text };
}

/** The answer to GET and DELETE on the MCP endpoint: no session, no standalone stream. */
export function noSessionReply(): Reply {
  return jsonRpcErrorReply(405, -32000, 'Method not allowed: this endpoint serves JSON-RPC over POST and offers no SSE stream or session.', undefined, null, {
    allow: 'POST',
  });
}

/** True for a web `Response` (the SDK's answers) as opposed to a {@link Reply}. */
export function isResponse(value: Reply | Response): value is Response {
  return value instanceof Response;
}

/** The web `Response` for a reply. */
export function toResponse(reply: Reply | Response): Response {
  if (isResponse(reply)) return reply;
  return new Response(reply.body, reply.headers === undefined ? { status: reply.status } : { status: reply.status, headers: reply.headers });
}
