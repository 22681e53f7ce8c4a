import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Invoker } from '@capnode/capabilities';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { isJsonContentType } from '@modelcontextprotocol/server';
import { Hono } from 'hono';
import { createMcpCore } from './internal/mcpCore.js';
import { AbortLatch } from './internal/abortLatch.js';
import { Admission } from './internal/admission.js';
import { browserHeader, createBearerCheck, isAllowedHost, isLoopbackAddress, isLoopbackHost } from './internal/gates.js';
import { readBody } from './internal/readBody.js';
import { jsonRpcErrorResponse } from './internal/responses.js';

/** Severity of a server log line. */
export type HttpLogLevel = 'debug' | 'info' | 'warning' | 'error';

/** Host-provided handler for `/_capnode/*` paths (approvals and other local administration). */
export interface AdminHandler {
  /** Bearer token required on admin paths (checked instead of the MCP token). */
  readonly token: string;
  handle(request: Request): Promise<Response>;
}

export interface HttpServerOptions {
  readonly invoker: Invoker;
  /** Loopback address or `localhost` to listen on; anything else throws. Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 8765; 0 picks a free port. */
  readonly port?: number;
  /** The bearer token every request must carry. Only an explicit `{ disabled: true }` turns auth off. */
  readonly token: string | { readonly disabled: true };
  /** Requests served at once; more wait up to 50 ms for a slot, then get 503 + Retry-After. Default 16. */
  readonly maxConcurrency?: number;
  /** Largest accepted body, on Content-Length and while reading. Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /** Deadline over body read and dispatch; past it the request gets 408 and frees its slot. Default 6 min. */
  readonly requestTimeoutMs?: number;
  /** How long `close()` waits for in-flight requests before aborting their calls. Default 5000. */
  readonly drainTimeoutMs?: number;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** Optional `instructions` sent to MCP clients. */
  readonly instructions?: string;
  /** Serves `/_capnode/*` behind the same gates, with its own bearer token. */
  readonly admin?: AdminHandler;
  readonly onLog?: (level: HttpLogLevel, message: string) => void;
}

/** A running loopback MCP server. */
export interface McpHttpServer {
  /** Endpoint URL, e.g. `http://127.0.0.1:8765/`. */
  readonly url: string;
  readonly port: number;
  /** Requests currently holding a concurrency slot. */
  readonly inFlight: number;
  /**
   * Replaces the MCP bearer token: from the next request on only `token` is accepted (token rotation
   * without a restart, so in-flight calls survive). Throws when authentication was disabled.
   */
  setToken(token: string): void;
  /** Stops accepting, drains in-flight requests (up to `drainTimeoutMs`), aborts the rest. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8765,
  maxConcurrency: 16,
  maxBodyBytes: 4 * 1024 * 1024,
  requestTimeoutMs: 6 * 60_000,
  drainTimeoutMs: 5000,
  admissionWaitMs: 50,
  abortGraceMs: 1000,
} as const;

const PROBE_TEXT = 'capnode MCP server: send JSON-RPC with POST to this URL (Content-Type: application/json).\n';
const ADMIN_PREFIX = '/_capnode/';

type Bindings = { Bindings: HttpBindings };

interface LiveRequest {
  readonly latch: AbortLatch;
  readonly outgoing: ServerResponse;
}

function textResponse(status: number, text: string, headers?: Record<string, string>): Response {
  return new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });
}

function emptyResponse(status: number, headers?: Record<string, string>): Response {
  return new Response(null, headers === undefined ? { status } : { status, headers });
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function timeoutError(message: string): Error {
  const error = new Error(message);
  error.name = 'TimeoutError';
  return error;
}

/**
 * Starts the hardened loopback MCP server (Hono on `@hono/node-server`).
 *
 * Every request passes these gates in order: non-loopback peer → 403; concurrency cap → 503 with
 * Retry-After; any Origin, Referer or browser fetch-metadata header (a lone `Sec-Fetch-Mode: cors`,
 * which Node's fetch sends, excepted) → 403; Host other than
 * 127.0.0.1 / localhost / [::1] (any port) or missing → 403; bearer token → 401 with no body, before
 * any method dispatch; `GET` → 200 text probe; verbs other than GET/POST/DELETE → 405; Content-Type
 * not `application/json` → 415; body over the limit → 413; past the deadline → 408. No
 * Access-Control-* header is ever sent, so a browser's CORS preflight always fails.
 *
 * @example
 * const { token } = await loadOrCreateToken(tokenPath);
 * await using server = await startHttpServer({ invoker, token });
 * console.log(`MCP endpoint ${server.url}`);
 */
export async function startHttpServer(options: HttpServerOptions & { readonly signal?: AbortSignal }): Promise<McpHttpServer> {
  const host = options.host ?? DEFAULTS.host;
  if (!isLoopbackHost(host)) throw new RangeError(`host must be a loopback address or localhost, got ${JSON.stringify(host)}`);
  const port = options.port ?? DEFAULTS.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`port must be an integer in 0..65535, got ${port}`);
  if (typeof options.token === 'string' ? options.token.length === 0 : options.token?.disabled !== true) {
    throw new TypeError('token must be a non-empty string, or { disabled: true } to switch authentication off explicitly');
  }
  const maxConcurrency = positive('maxConcurrency', options.maxConcurrency ?? DEFAULTS.maxConcurrency);
  const maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes ?? DEFAULTS.maxBodyBytes);
  const requestTimeoutMs = positive('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
  const drainTimeoutMs = nonNegative('drainTimeoutMs', options.drainTimeoutMs ?? DEFAULTS.drainTimeoutMs);
  options.signal?.throwIfAborted();

  const log = (level: HttpLogLevel, message: string): void => {
    try {
      options.onLog?.(level, message);
    } catch {
      // A failing logger must not break serving.
    }
  };
  const core = createMcpCore({
    invoker: options.invoker,
    maxBodyBytes,
    onError: (error) => log('error', `mcp: ${error.message}`),
    ...(options.serverInfo === undefined ? {} : { serverInfo: options.serverInfo }),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
  });
  let checkToken = typeof options.token === 'string' ? createBearerCheck(options.token) : undefined;
  const admin = options.admin;
  const checkAdmin = admin === undefined ? undefined : createBearerCheck(admin.token);
  const admission = new Admission(maxConcurrency, DEFAULTS.admissionWaitMs);
  const live = new Set<LiveRequest>();
  let closing = false;

  /** Gates after admission, then routing; `latch` aborts the calls this request started. */
  const dispatch = async (request: Request, incoming: IncomingMessage, latch: AbortLatch): Promise<Response> => {
    const headers = incoming.headers;
    const browser = browserHeader(headers);
    if (browser !== undefined) return textResponse(403, `Forbidden: requests carrying ${browser} are refused (browser requests are not served).\n`);
    if (!isAllowedHost(headers.host)) return textResponse(403, 'Forbidden: the Host header must be 127.0.0.1, localhost or [::1].\n');
    const path = pathOf(incoming.url);
    const isAdmin = path.startsWith(ADMIN_PREFIX);
    const check = isAdmin ? checkAdmin : checkToken;
    if ((isAdmin || check !== undefined) && (check === undefined || !check(headers.authorization))) {
      return emptyResponse(401, { 'www-authenticate': 'Bearer realm="capnode"' });
    }
    const method = request.method;
    if (isAdmin) return serveAdmin(request, incoming, method);
    if (method === 'GET') {
      if (headers.accept?.includes('text/event-stream')) return core.serve(request, {});
      return textResponse(200, PROBE_TEXT);
    }
    if (method === 'DELETE') return core.serve(request, {});
    if (method !== 'POST') {
      return jsonRpcErrorResponse(405, -32000, `Method not allowed: ${method}`, undefined, null, { allow: 'GET, POST, DELETE' });
    }
    if (!isJsonContentType(headers['content-type'])) {
      return jsonRpcErrorResponse(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const read = await readBounded(incoming);
    if (read instanceof Response) return read;
    let body: unknown;
    try {
      body = JSON.parse(read);
    } catch {
      return jsonRpcErrorResponse(400, -32700, 'Parse error: the body is not valid JSON');
    }
    return core.serve(request, { parsedBody: body, rawBody: read, lifetime: latch });
  };

  const readBounded = async (incoming: IncomingMessage): Promise<string | Response> => {
    const declared = Number(incoming.headers['content-length']);
    if (declared > maxBodyBytes) return tooLarge();
    const read = await readBody(incoming, maxBodyBytes);
    if (read.kind === 'too-large') return tooLarge();
    if (read.kind === 'aborted') return jsonRpcErrorResponse(400, -32700, 'Parse error: the body could not be read', undefined, null, { connection: 'close' });
    return read.text;
  };

  const tooLarge = (): Response =>
    jsonRpcErrorResponse(413, -32000, `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`, undefined, null, { connection: 'close' });

  const serveAdmin = async (request: Request, incoming: IncomingMessage, method: string): Promise<Response> => {
    if (admin === undefined) return textResponse(404, 'Not found.\n');
    if (method === 'GET' || method === 'HEAD') return admin.handle(request);
    const read = await readBounded(incoming);
    if (read instanceof Response) return read;
    const headers = new Headers();
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (value !== undefined && name !== 'content-length' && name !== 'transfer-encoding') headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return admin.handle(new Request(request.url, { method, headers, body: read }));
  };

  const serve = async (request: Request, incoming: IncomingMessage, outgoing: ServerResponse): Promise<Response> => {
    if (!isLoopbackAddress(incoming.socket.remoteAddress)) return textResponse(403, 'Forbidden: only loopback peers are served.\n');
    if (closing) return textResponse(503, 'The server is shutting down.\n', { 'retry-after': '1', connection: 'close' });
    if (!admission.tryAcquire() && !(await admission.acquire())) {
      return textResponse(503, 'Busy: too many requests in flight; retry shortly.\n', { 'retry-after': '1' });
    }
    const latch = new AbortLatch();
    const entry: LiveRequest = { latch, outgoing };
    live.add(entry);
    let onDeadline!: (response: Response) => void;
    const deadline = new Promise<Response>((resolve) => {
      onDeadline = resolve;
    });
    const timer = setTimeout(() => {
      latch.abort(timeoutError(`request exceeded ${requestTimeoutMs} ms`));
      if (outgoing.headersSent) outgoing.destroy();
      else onDeadline(jsonRpcErrorResponse(408, -32000, 'Request Timeout: the request took too long', undefined, null, { connection: 'close' }));
    }, requestTimeoutMs);
    outgoing.once('close', () => {
      clearTimeout(timer);
      live.delete(entry);
      if (!outgoing.writableFinished) latch.abort(new Error('client disconnected'));
      admission.release();
    });
    return Promise.race([dispatch(request, incoming, latch), deadline]);
  };

  const app = new Hono<Bindings>();
  app.all('*', (c) => serve(c.req.raw, c.env.incoming as IncomingMessage, c.env.outgoing as ServerResponse));
  app.onError((error) => {
    log('error', `http: unhandled ${error.name}: ${error.message}`);
    return jsonRpcErrorResponse(500, -32603, 'Internal server error');
  });

  const defaultHostname = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const listener = getRequestListener(app.fetch, {
    hostname: defaultHostname,
    errorHandler: () => textResponse(400, 'Bad Request.\n', { connection: 'close' }),
  });
  // Node would answer a missing Host with 400 itself; the Host gate answers it with 403 in its place in the order.
  const server = createServer({ requestTimeout: 0, requireHostHeader: false }, (incoming, outgoing) => void listener(incoming, outgoing));

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${urlHost}:${address.port}/`;
  log('info', `listening on ${url}`);

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (!(await admission.idle(drainTimeoutMs))) {
        log('warning', `shutdown: aborting ${admission.active} request(s) still in flight after ${drainTimeoutMs} ms`);
        for (const entry of live) entry.latch.abort(new Error('server shutting down'));
        await admission.idle(DEFAULTS.abortGraceMs);
      }
      server.closeAllConnections();
      await stopped;
      await core.mcp.close();
      options.signal?.removeEventListener('abort', onSignal);
      log('info', 'closed');
    })();
    return closed;
  };
  const onSignal = (): void => {
    void close();
  };
  options.signal?.addEventListener('abort', onSignal, { once: true });

  return {
    url,
    port: address.port,
    get inFlight() {
      return admission.active;
    },
    setToken(token) {
      if (checkToken === undefined) throw new TypeError('authentication is disabled on this server; there is no token to replace');
      if (typeof token !== 'string' || token.length === 0) throw new TypeError('token must be a non-empty string');
      checkToken = createBearerCheck(token);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a number >= 0, got ${value}`);
  return value;
}
