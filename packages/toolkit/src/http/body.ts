import type { IncomingMessage } from 'node:http';

/** The outcome of a bounded body read. */
export type BodyRead = { readonly kind: 'ok'; readonly text: string } | { readonly kind: 'too-large' } | { readonly kind: 'aborted' };

const TOO_LARGE: BodyRead = { kind: 'too-large' };
const ABORTED: BodyRead = { kind: 'aborted' };

const READER = Symbol('capnode.bodyReader');

/** The state of one bounded body read, kept on the request so the listeners can be shared functions. */
interface BodyReader {
  readonly maxBytes: number;
  readonly resolve: (read: BodyRead) => void;
  chunks: Buffer[];
  size: number;
  ended: boolean;
}

type ReadIncoming = IncomingMessage & { [READER]?: BodyReader | undefined };

function stopReading(incoming: ReadIncoming): void {
  incoming.off('data', onBodyData);
  incoming.off('end', onBodyEnd);
  incoming.off('error', onBodyAbort);
  incoming.off('close', onBodyAbort);
  incoming[READER] = undefined;
}

function onBodyData(this: ReadIncoming, chunk: Buffer): void {
  const reader = this[READER];
  if (reader === undefined) return;
  reader.size += chunk.length;
  if (reader.size > reader.maxBytes) {
    stopReading(this);
    this.pause();
    reader.resolve(TOO_LARGE);
    return;
  }
  reader.chunks.push(chunk);
}

function onBodyEnd(this: ReadIncoming): void {
  const reader = this[READER];
  if (reader === undefined) return;
  // After `end` only `close` can follow, so the listeners stay (the request object goes with them).
  reader.ended = true;
  const { chunks } = reader;
  const buffer = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, reader.size);
  reader.resolve({ kind: 'ok', text: buffer.toString('utf8') });
}

function onBodyAbort(this: ReadIncoming): void {
  const reader = this[READER];
  if (reader === undefined || reader.ended) return;
  stopReading(this);
  reader.resolve(ABORTED);
}

/**
 * Reads a request body as UTF-8, refusing a declared `Content-Length` over `maxBytes` before reading and
 * stopping as soon as more than `maxBytes` arrived. The caller bounds the wait with its own deadline.
 * The listeners are shared functions that find the read's state on the request (none made per request).
 */
export function readBody(incoming: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  if (Number(incoming.headers['content-length']) > maxBytes) return Promise.resolve(TOO_LARGE);
  if (incoming.readableEnded) return Promise.resolve({ kind: 'ok', text: '' });
  const target = incoming as ReadIncoming;
  if (target[READER] !== undefined) return Promise.reject(new Error('the request body is already being read'));
  return new Promise((resolve) => {
    target[READER] = { maxBytes, resolve, chunks: [], size: 0, ended: false };
    target.on('data', onBodyData);
    target.on('end', onBodyEnd);
    target.on('error', onBodyAbort);
    target.on('close', onBodyAbort);
  });
}

/**
 * Reads a web request's body as text, at most `maxBytes` of it (a declared `Content-Length` over the
 * limit is refused unread); `aborted` when the stream fails.
 */
export async function readWebBody(request: Request, maxBytes: number): Promise<BodyRead> {
  if (Number(request.headers.get('content-length')) > maxBytes) return TOO_LARGE;
  const body = request.body;
  if (body === null) return { kind: 'ok', text: '' };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return TOO_LARGE;
      }
      chunks.push(value);
    }
  } catch {
    return ABORTED;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { kind: 'ok', text: new TextDecoder().decode(bytes) };
}

/** The body of `incoming` as a web stream that errors once more than `maxBytes` arrived. */
function boundedStream(incoming: IncomingMessage, maxBytes: number): ReadableStream<Uint8Array> {
  const chunks = incoming[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      if (done === true) {
        controller.close();
        return;
      }
      size += value.byteLength;
      if (size > maxBytes) {
        controller.error(new RangeError('body too large'));
        await chunks.return?.();
      } else {
        controller.enqueue(value);
      }
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

/**
 * A web `Request` over a Node request for a fetch-shaped handler: headers copied (hop-by-hop
 * `Transfer-Encoding` and `Connection` dropped), the target taken as a path only (an absolute-form
 * target cannot name another host), and a body stream that errors once more than `maxBodyBytes` arrived.
 */
export function toWebRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal, maxBodyBytes: number): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined || name === 'transfer-encoding' || name === 'connection') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const body = hasBody ? boundedStream(incoming, maxBodyBytes) : undefined;
  const target = incoming.url?.startsWith('/') ? incoming.url : '/';
  return new Request(origin + target, { method, headers, signal, ...(body ? { body, duplex: 'half' } : {}) } as RequestInit);
}
