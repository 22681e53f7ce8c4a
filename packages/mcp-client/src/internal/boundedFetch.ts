import type { FetchLike } from '@modelcontextprotocol/client';
import { JsonRpcErrorCode } from '@capnode/protocol';

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
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: JsonRpcErrorCode.InternalError, message: text } });
}

/** The `requestId`s of `notifications/cancelled` messages in a request body. */
function cancelledIds(body: unknown): RequestId[] {
  if (typeof body !== 'string' || !body.includes('notifications/cancelled') || body.length > 64 * 1024) return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((message) => {
      const m = message as { method?: unknown; params?: { requestId?: unknown } };
      const id = m.params?.requestId;
      return m.method === 'notifications/cancelled' && (typeof id === 'string' || typeof id === 'number') ? [id] : [];
    });
  } catch {
    return [];
  }
}

/**
 * Counts bytes since the last event boundary (a blank line) of an event stream, across reads: a
 * boundary split between two chunks (`…\n` | `\n…`, or `\r\n` | `\r\n`) still counts.
 */
class EventBoundaryCounter {
  #sinceBoundary = 0;
  #lineHasContent = true;

  /** Takes the next chunk; true when some event grew longer than `maxBytes`. */
  push(bytes: Uint8Array, maxBytes: number): boolean {
    let since = this.#sinceBoundary;
    let content = this.#lineHasContent;
    for (let i = 0; i < bytes.length; i += 1) {
      const byte = bytes[i];
      since += 1;
      if (since > maxBytes) return true;
      if (byte === 0x0a) {
        if (!content) since = 0;
        content = false;
      } else if (byte !== 0x0d) content = true;
    }
    this.#sinceBoundary = since;
    this.#lineHasContent = content;
    return false;
  }
}

/**
 * A `fetch` for the MCP HTTP transports that caps response bodies on the raw wire bytes before the
 * SDK parses them, and attaches configured headers to every request.
 *
 * JSON bodies are capped as a whole; event streams per event, so a long-lived stream is not cut for
 * its total length. When a response to a request overflows, the body is replaced by (JSON) or ends
 * with (event stream) a JSON-RPC error for that request, so the call fails at once with a clear
 * message instead of hanging until its timeout; other overflowing streams are errored.
 *
 * A request's response body is aborted as soon as the transport sends `notifications/cancelled` for
 * it (the SDK does so at its request timeout and on abort), so a dripping body does not hold its
 * socket after the call has failed.
 */
export function createBoundedFetch(options: BoundedFetchOptions): FetchLike {
  const { maxBytes } = options;
  const base: FetchLike = options.base ?? ((url, init) => fetch(url, init));
  const text = `response exceeded max_response_bytes (${maxBytes} bytes) and was discarded`;
  /** The body controllers of requests whose response is still being read, by JSON-RPC id. */
  const inflight = new Map<RequestId, AbortController>();
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(options.headers)) if (!headers.has(name)) headers.set(name, value);
    for (const id of cancelledIds(init?.body)) {
      inflight.get(id)?.abort(new Error('request cancelled'));
      inflight.delete(id);
    }
    const ids = requestIds(init?.body);
    // One controller per request, fed by the transport's signal, so one response body can be aborted alone.
    const controller = ids.length > 0 ? new AbortController() : undefined;
    const outer = init?.signal ?? undefined;
    const onOuterAbort = () => controller?.abort(outer?.reason);
    const release = () => {
      outer?.removeEventListener('abort', onOuterAbort);
      for (const id of ids) if (inflight.get(id) === controller) inflight.delete(id);
    };
    if (controller) {
      if (outer?.aborted) controller.abort(outer.reason);
      else outer?.addEventListener('abort', onOuterAbort, { once: true });
      for (const id of ids) inflight.set(id, controller);
    }
    let response: Response;
    try {
      response = await base(url, { ...init, headers, ...(controller ? { signal: controller.signal } : {}) });
    } catch (error) {
      release();
      throw error;
    }
    const body = response.body;
    if (!body) {
      release();
      return response;
    }
    const isStream = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    const declared = Number(response.headers.get('content-length') ?? NaN);
    const oversize = () => options.onOversize?.(text);

    let stream: ReadableStream<Uint8Array>;
    if (!isStream) {
      if (Number.isFinite(declared) && declared > maxBytes) {
        release();
        await body.cancel().catch(() => {});
        oversize();
        if (ids.length === 0) throw new Error(text);
        stream = new Blob([ids.length === 1 ? errorMessage(ids[0]!, text) : `[${ids.map((id) => errorMessage(id, text)).join(',')}]`]).stream();
      } else {
        stream = boundJson(body, maxBytes, ids, text, oversize, release);
      }
    } else {
      stream = boundEvents(body, maxBytes, ids, text, oversize, release);
    }
    const wrapped = new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(wrapped, 'url', { value: response.url });
    Object.defineProperty(wrapped, 'redirected', { value: response.redirected });
    return wrapped;
  };
}

function boundJson(body: ReadableStream<Uint8Array>, maxBytes: number, ids: RequestId[], text: string, oversize: () => void, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { value, done } = await read(reader, release);
        if (done) {
          release();
          const invalid = ids.length > 0 ? invalidResponseIds(chunks, ids) : [];
          if (invalid.length > 0) {
            // A known id without a result or an error: fail those requests now, not at their timeout.
            const text = 'the server sent an invalid JSON-RPC response (neither a valid result nor an error)';
            controller.enqueue(new TextEncoder().encode(invalid.length === 1 ? errorMessage(invalid[0]!, text) : `[${invalid.map((id) => errorMessage(id, text)).join(',')}]`));
          } else for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
          return;
        }
        total += value.byteLength;
        if (total > maxBytes) {
          release();
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
      release();
      return reader.cancel(reason);
    },
  });
}

/**
 * The request ids answered by a JSON body that carries neither `result` nor `error`. Cheap for valid
 * bodies: only a body without either word is parsed.
 */
function invalidResponseIds(chunks: readonly Uint8Array[], ids: readonly RequestId[]): RequestId[] {
  const bytes = chunks.length === 1 ? Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength) : Buffer.concat(chunks);
  if (bytes.includes('"result"') || bytes.includes('"error"')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return [];
  }
  const messages = (Array.isArray(parsed) ? parsed : [parsed]) as { id?: unknown; method?: unknown }[];
  return messages.flatMap((message) =>
    typeof message === 'object' && message !== null && message.method === undefined && ids.includes(message.id as RequestId) ? [message.id as RequestId] : [],
  );
}

/** Reads one chunk; a failed read (aborted body) releases the request first. */
async function read(reader: ReadableStreamDefaultReader<Uint8Array>, release: () => void): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  try {
    return await reader.read();
  } catch (error) {
    release();
    throw error;
  }
}

function boundEvents(body: ReadableStream<Uint8Array>, maxBytes: number, ids: RequestId[], text: string, oversize: () => void, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const counter = new EventBoundaryCounter();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await read(reader, release);
      if (done) {
        release();
        controller.close();
        return;
      }
      if (counter.push(value, maxBytes)) {
        release();
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
      release();
      return reader.cancel(reason);
    },
  });
}
