/**
 * An HTTP answer before it becomes a web `Response` or a Node write: the hot path writes it straight to
 * `node:http` (no Response, no Headers object); a web face converts it with {@link toResponse}.
 */
export interface HttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body: string | ReadableStream<Uint8Array> | null;
}

const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json' };

/** A JSON body with status 200 (or `status`); `headers` are added to `Content-Type: application/json`. */
export function jsonReply(body: string, status = 200, headers?: Record<string, string>): HttpReply {
  return { status, headers: headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers }, body };
}

/**
 * A JSON-RPC 2.0 error response with an HTTP status, the shape every entry-level refusal of a JSON-RPC
 * endpoint takes. The caller names `code` by its constant (protocol's `JsonRpcErrorCode`).
 */
export function jsonRpcErrorReply(
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: string | number | null = null,
  headers?: Record<string, string>,
): HttpReply {
  const error = data === undefined ? { code, message } : { code, message, data };
  return jsonReply(JSON.stringify({ jsonrpc: '2.0', id, error }), status, headers);
}

/** A plain-text (UTF-8) answer. */
export function textReply(status: number, text: string, headers?: Record<string, string>): HttpReply {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers }, body: text };
}

/** True for a web `Response` as opposed to an {@link HttpReply}. */
export function isResponse(value: HttpReply | Response): value is Response {
  return value instanceof Response;
}

/** The web `Response` for a reply. */
export function toResponse(reply: HttpReply | Response): Response {
  if (isResponse(reply)) return reply;
  return new Response(reply.body, reply.headers === undefined ? { status: reply.status } : { status: reply.status, headers: reply.headers });
}
