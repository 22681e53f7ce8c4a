import type { ServerResponse } from 'node:http';
import { isResponse, type HttpReply } from './reply.js';

function isEventStream(contentType: string | null | undefined): boolean {
  return contentType?.toLowerCase().startsWith('text/event-stream') ?? false;
}

/** Writes the chunks of `body` as they come, flushing each; cancels the stream when the client goes away. */
async function pipeStream(body: ReadableStream<Uint8Array>, outgoing: ServerResponse): Promise<void> {
  outgoing.flushHeaders();
  const reader = body.getReader();
  const onClose = (): void => {
    reader.cancel().catch(() => {});
  };
  outgoing.once('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!outgoing.writable) break;
      outgoing.write(value);
    }
  } catch {
    // The producer failed or was cancelled; the answer ends here.
  } finally {
    outgoing.off('close', onClose);
    outgoing.end();
  }
}

/** Writes a plain reply (the hot path: one `writeHead` and one `end`) or a streaming one. */
function writeReply(outgoing: ServerResponse, reply: HttpReply): Promise<void> | undefined {
  const { status, headers, body } = reply;
  const raw: string[] = [];
  if (headers !== undefined) for (const name in headers) raw.push(name, headers[name] as string);
  if (body === null) {
    outgoing.writeHead(status, raw);
    outgoing.end();
    return undefined;
  }
  if (typeof body === 'string') {
    raw.push('content-length', String(Buffer.byteLength(body)));
    outgoing.writeHead(status, raw);
    outgoing.end(body);
    return undefined;
  }
  outgoing.writeHead(status, raw);
  return pipeStream(body, outgoing);
}

/** Writes a web `Response` (the SDK's per-request answers, the admin handler's): buffered unless it is SSE. */
async function writeWebResponse(outgoing: ServerResponse, response: Response): Promise<void> {
  const raw: string[] = [];
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') raw.push(name, value);
  });
  const body = response.body;
  if (body === null) {
    outgoing.writeHead(response.status, raw);
    outgoing.end();
    return;
  }
  if (isEventStream(response.headers.get('content-type'))) {
    outgoing.writeHead(response.status, raw);
    return pipeStream(body, outgoing);
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  if (outgoing.headersSent || outgoing.destroyed) return;
  raw.push('content-length', String(bytes.byteLength));
  outgoing.writeHead(response.status, raw);
  outgoing.end(bytes);
}

/** Writes either kind of answer to a Node response. */
export function writeAnswer(outgoing: ServerResponse, answer: HttpReply | Response): Promise<void> | undefined {
  return isResponse(answer) ? writeWebResponse(outgoing, answer) : writeReply(outgoing, answer);
}

/**
 * Writes a web `Response` as it streams, every header kept (`Set-Cookie` lines each on their own):
 * for a listener whose handler answers pages, assets and event streams alike.
 */
export async function writeStreamedResponse(outgoing: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers['set-cookie'] = cookies;
  outgoing.writeHead(response.status, headers);
  if (!response.body) {
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  outgoing.once('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (outgoing.destroyed) return;
    // Event streams flush each chunk at once (no buffering behind the next write).
    outgoing.write(value);
  }
  outgoing.end();
}
