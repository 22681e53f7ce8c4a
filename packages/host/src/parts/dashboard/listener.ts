import { createServer } from 'node:http';
import { createHttpKernel, jsonReply, listenOn, originOf, signalFromHook, textReply, toWebRequest, writeStreamedResponse } from '@capnode/toolkit/http';


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

const FORBIDDEN_PEER = textReply(403, 'Forbidden: only loopback peers are served.\n', { connection: 'close' });
const SHUTTING_DOWN = textReply(503, 'The dashboard is shutting down.\n', { 'retry-after': '1', connection: 'close' });
const INTERNAL = jsonReply('{"error":{"code":"internal","message":"internal error"}}', 500);
const DUPLICATE_HOST = jsonReply('{"error":{"code":"host","message":"more than one Host header"}}', 400);

/** Methods the dashboard answers; any other (TRACE, CONNECT, WebDAV verbs, …) is 405 before routing. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);
const ALLOWED_METHODS = [...METHODS].join(', ');
const METHOD_NOT_ALLOWED = jsonReply('{"error":{"code":"method","message":"method not allowed"}}', 405, { allow: ALLOWED_METHODS });

/**
 * Starts the dashboard's own loopback listener on `node:http`: every request becomes a web `Request`
 * for `handle` (body capped at {@link DASHBOARD_MAX_BODY}), its `Response` is streamed back.
 * Nothing but loopback peers is served.
 */
export async function startDashboardListener(options: DashboardListenerOptions): Promise<DashboardListener> {
  const host = options.host ?? '127.0.0.1';
  const drainTimeoutMs = options.drainTimeoutMs ?? 2000;
  let origin = '';
  // No request deadline and no concurrency cap (event streams stay open); a bounded number of sockets instead.
  const kernel = createHttpKernel({
    admit: (incoming) => (METHODS.has(incoming.method ?? '') ? { route: undefined } : { refuse: METHOD_NOT_ALLOWED }),
    handle: async (incoming, request) => {
      const signal = signalFromHook(request);
      try {
        const response = await options.handle(toWebRequest(incoming, origin, signal, DASHBOARD_MAX_BODY), { signal, remoteAddress: incoming.socket.remoteAddress });
        request.answered = true;
        await writeStreamedResponse(request.outgoing, response);
      } catch (error) {
        options.onError?.(error);
        if (request.outgoing.headersSent) request.outgoing.destroy();
        else return INTERNAL;
      }
    },
    replies: { forbiddenPeer: FORBIDDEN_PEER, shuttingDown: SHUTTING_DOWN, busy: SHUTTING_DOWN, timeout: INTERNAL, internal: INTERNAL, duplicateHost: DUPLICATE_HOST },
    onLog: (level, message) => {
      if (level === 'error') options.onError?.(new Error(message));
    },
  });
  const server = createServer({ requestTimeout: 0 }, kernel.listener);
  server.maxConnections = MAX_CONNECTIONS;
  const address = await listenOn(server, options.port, host);
  origin = originOf(address);
  const hostHeader = origin.slice('http://'.length);
  let closed: Promise<void> | undefined;
  // Event streams end first (every request is aborted), then in-flight requests get `drainTimeoutMs`.
  const close = (): Promise<void> => (closed ??= kernel.drain(server, { drainTimeoutMs, abortFirst: true }));
  return { origin, hostHeader, port: address.port, close, [Symbol.asyncDispose]: close };
}
