import type { FetchLike } from '@modelcontextprotocol/client';

export interface BoundedFetchOptions {
  /** Most raw bytes of one response body (one event, for event streams). */
  readonly maxBytes: number;
  /** Sent on every request unless the transport set the same header. */
  readonly headers: Readonly<Record<string, string>>;
  readonly onOversize?: (detail: string) => void;
  readonly base?: FetchLike;
}

type RequestId = string | number;

function requestIds(body: unknown): RequestId[] {
  if (typeof body !== 'string' || body.length > 1024 * 1024) return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((message) => {
      const m = message as { id?: unknown; method?: unknown };
      return typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number') ? [m.id] : [];
    });
  } catch {
    return [];
  }
}

function errorMessage(id: RequestId, text: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: text } });
}

/** Index just past the first blank line (event boundary) at or after `from`, or -1. */
function eventBoundary(bytes: Uint8Array, from: number): number {
  for (let i = Math.max(from, 1); i < bytes.length; i += 1) {
    if (bytes[i] !== 0x0a) continue;
    if (bytes[i - 1] === 0x0a) return i + 1;
    if (bytes[i - 1] === 0x0d && i >= 3 && bytes[i - 2] === 0x0a && bytes[i - 3] === 0x0d) return i + 1;
  }
  return -1;
}

/**
 * A `fetch` for the MCP HTTP transports that caps response bodies on the raw wire bytes before the
 * SDK parses them, and attaches configured headers to every request.
 *
 * JSON bodies are capped as a whole; event streams per event, so a long-lived stream is not cut for
 * its total length. When a response to a request overflows, the body is replaced by (JSON) or ends
 * with (event stream) a JSON-RPC error for that request, so the call fails at once with a clear
 * message instead of hanging until its timeout; other overflowing streams are errored.
 */
export function createBoundedFetch(options: BoundedFetchOptions): FetchLike {
  const { maxBytes } = options;
  const base: FetchLike = options.base ?? ((url, init) => fetch(url, init));
  const text = `response exceeded max_response_bytes (${maxBytes} bytes) and was discarded`;
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(options.headers)) if (!headers.has(name)) headers.set(name, value);
    const response = await base(url, { ...init, headers });
    const body = response.body;
    if (!body) return response;
    const ids = requestIds(init?.body);
    const isStream = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    const declared = Number(response.headers.get('content-length') ?? NaN);
    const oversize = () => options.onOversize?.(text);

    let stream: ReadableStream<Uint8Array>;
    if (!isStream) {
      if (Number.isFinite(declared) && declared > maxBytes) {
        await body.cancel().catch(() => {});
        oversize();
        if (ids.length === 0) throw new Error(text);
        stream = new Blob([ids.length === 1 ? errorMessage(ids[0]!, text) : `[${ids.map((id) => errorMessage(id, text)).join(',')}]`]).stream();
      } else {
        stream = boundJson(body, maxBytes, ids, text, oversize);
      }
    } else {
      stream = boundEvents(body, maxBytes, ids, text, oversize);
    }
    const wrapped = new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(wrapped, 'url', { value: response.url });
    Object.defineProperty(wrapped, 'redirected', { value: response.redirected });
    return wrapped;
  };
}

function boundJson(body: ReadableStream<Uint8Array>, maxBytes: number, ids: RequestId[], text: string, oversize: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
          return;
        }
        total += value.byteLength;
        if (total > maxBytes) {
          await reader.cancel().catch(() => {});
          chunks.length = 0;
          oversize();
          if (ids.length === 0) controller.error(new Error(text));
          else {
            const replacement = ids.length === 1 ? errorMessage(ids[0]!, text) : `[${ids.map((id) => errorMessage(id, text)).join(',')}]`;
            controller.enqueue(new TextEncoder().encode(replacement));
            controller.close();
          }
          return;
        }
        chunks.push(value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function boundEvents(body: ReadableStream<Uint8Array>, maxBytes: number, ids: RequestId[], text: string, oversize: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let sinceBoundary = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      let last = -1;
      for (let at = eventBoundary(value, 0); at !== -1; at = eventBoundary(value, at)) last = at;
      sinceBoundary = last === -1 ? sinceBoundary + value.byteLength : value.byteLength - last;
      if (sinceBoundary > maxBytes) {
        await reader.cancel().catch(() => {});
        oversize();
        if (ids.length === 0) {
          controller.error(new Error(text));
          return;
        }
        const events = ids.map((id) => `event: message\ndata: ${errorMessage(id, text)}\n\n`).join('');
        controller.enqueue(new TextEncoder().encode(`\n\n${events}`));
        controller.close();
        return;
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
