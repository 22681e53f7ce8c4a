import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { isLoopbackAddress } from '@capnode/toolkit';

/** Sockets served at once. */
const MAX_CONNECTIONS = 128;

/** Largest request body the dashboard reads. */
export const DASHBOARD_MAX_BODY = 1024 * 1024;

export interface DashboardListenerOptions {
  /** Loopback address; default `127.0.0.1`. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Answers one request; `signal` aborts when the client goes away or the listener closes. */
  readonly handle: (request: Request, context: { readonly signal: AbortSignal; readonly remoteAddress: string | undefined }) => Promise<Response>;
  /** How long `close()` lets in-flight requests finish before cutting them. Default 2 s. */
  readonly drainTimeoutMs?: number;
  readonly onError?: (error: unknown) => void;
}

/** A running dashboard listener. */
export interface DashboardListener {
  /** `http://127.0.0.1:<port>` (no trailing slash): the only Origin the dashboard accepts. */
  readonly origin: string;
  /** `127.0.0.1:<port>`: the only Host header the dashboard accepts. */
  readonly hostHeader: string;
  readonly port: number;
  /** Stops accepting, ends event streams, drains in-flight requests, then cuts what is left. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined || name === 'transfer-encoding' || name === 'connection') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  let size = 0;
  const body = hasBody
    ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>).pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            size += chunk.byteLength;
            if (size > DASHBOARD_MAX_BODY) controller.error(new RangeError('body too large'));
            else controller.enqueue(chunk);
          },
        }),
      )
    : undefined;
  // The target is taken as a path only: an absolute-form target cannot name another host.
  const target = incoming.url?.startsWith('/') ? incoming.url : '/';
  return new Request(origin + target, { method, headers, signal, ...(body ? { body, duplex: 'half' } : {}) } as RequestInit);
}

async function writeResponse(response: Response, outgoing: ServerResponse): Promise<void> {
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

/**
 * Starts the dashboard's own loopback listener on `node:http`: every request becomes a web `Request`
 * for `handle` (body capped at {@link DASHBOARD_MAX_BODY}), its `Response` is streamed back.
 * Nothing but loopback peers is served.
 */
export async function startDashboardListener(options: DashboardListenerOptions): Promise<DashboardListener> {
  const host = options.host ?? '127.0.0.1';
  const drainTimeoutMs = options.drainTimeoutMs ?? 2000;
  const closing = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let origin = '';
  const onRequest = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    // Bound to loopback already; a peer from elsewhere is refused all the same.
    if (!isLoopbackAddress(incoming.socket.remoteAddress)) {
      outgoing.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end('Forbidden: only loopback peers are served.\n');
      return;
    }
    const local = new AbortController();
    const signal = AbortSignal.any([local.signal, closing.signal]);
    outgoing.once('close', () => local.abort());
    const work = (async () => {
      try {
        const response = await options.handle(toRequest(incoming, origin, signal), { signal, remoteAddress: incoming.socket.remoteAddress });
        await writeResponse(response, outgoing);
      } catch (error) {
        options.onError?.(error);
        if (!outgoing.headersSent) outgoing.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"internal","message":"internal error"}}');
        else outgoing.destroy();
      }
    })();
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  // No request deadline (event streams stay open); a bounded number of sockets, one browser's worth and more.
  const server = createServer({ requestTimeout: 0 }, onRequest);
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const hostHeader = `${urlHost}:${address.port}`;
  origin = `http://${hostHeader}`;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      closing.abort();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, drainTimeoutMs)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      await stopped;
    })();
    return closed;
  };
  return { origin, hostHeader, port: address.port, close, [Symbol.asyncDispose]: close };
}
