import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import { isLoopbackHostHeader } from '@capnode/toolkit';
import { createHttpKernel, jsonReply, listenOn, originOf, readBody, signalFromHook, type HttpReply } from '@capnode/toolkit/http';
import type { BrowserRouteRequest, BrowserRouteResponse } from './browserRoutes.js';

/** Largest request body the browser-control service reads. */
export const BROWSER_CONTROL_MAX_BODY = 1024 * 1024;
/** Largest body of `POST /hooks/file-chooser`: 16 MiB of files as base64, and room for the rest. */
export const BROWSER_CONTROL_MAX_UPLOAD_BODY = 24 * 1024 * 1024;
/** Requests served at once (one browser: more would only queue inside it). */
const MAX_CONCURRENCY = 8;
/** Longest a request may take, body and browser work together. */
const REQUEST_TIMEOUT_MS = 130_000;

export interface BrowserControlListenerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /** Bearer token every request carries. */
  readonly token: string;
  readonly dispatch: (request: BrowserRouteRequest) => Promise<BrowserRouteResponse>;
  readonly onError?: (error: unknown) => void;
}

export interface BrowserControlListener extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const error = (status: number, message: string, headers?: Record<string, string>): HttpReply => jsonReply(JSON.stringify({ error: message }), status, headers);
const METHODS = new Set(['GET', 'POST', 'DELETE']);

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The gates of every request, before its body is read: Host a loopback name (DNS rebinding), no
 * `Origin` (a web page's request), the bearer token, and on POST a JSON content type (so a page's
 * simple request cannot reach it without a preflight that is never answered).
 */
function admit(incoming: IncomingMessage, token: Buffer): { refuse: HttpReply } | { route: undefined } {
  if (!METHODS.has(incoming.method ?? '')) return { refuse: error(405, 'method not allowed', { allow: 'GET, POST, DELETE' }) };
  if (!isLoopbackHostHeader(incoming.headers.host)) return { refuse: error(403, 'the Host header must be a loopback name') };
  if (incoming.headers.origin !== undefined || incoming.headers['sec-fetch-site'] !== undefined) return { refuse: error(403, 'requests from web pages are refused') };
  const auth = /^Bearer (.+)$/i.exec(incoming.headers.authorization ?? '');
  if (!auth || !timingSafeEqual(digest(auth[1]!.trim()), token)) return { refuse: error(401, 'missing or wrong bearer token', { 'www-authenticate': 'Bearer' }) };
  if (incoming.method === 'POST') {
    const type = (incoming.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const empty = incoming.headers['content-length'] === '0' || (incoming.headers['content-length'] === undefined && incoming.headers['transfer-encoding'] === undefined);
    if (!empty && type !== 'application/json') return { refuse: error(415, 'the body must be application/json') };
  }
  return { route: undefined };
}

function queryOf(url: URL): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (!(key in query)) query[key] = value;
  return query;
}

/**
 * Starts the browser-control service on 127.0.0.1 (OpenClaw's routes; see `createBrowserRoutes`): loopback
 * peers only, loopback Host names only, no browser-page requests, a bearer token, JSON bodies up to
 * {@link BROWSER_CONTROL_MAX_BODY} ({@link BROWSER_CONTROL_MAX_UPLOAD_BODY} for an upload).
 */
export async function startBrowserControlListener(options: BrowserControlListenerOptions): Promise<BrowserControlListener> {
  const token = digest(options.token);
  const internal = error(500, 'internal error');
  const kernel = createHttpKernel<undefined>({
    maxConcurrency: MAX_CONCURRENCY,
    admissionWaitMs: 5000,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    admit: (incoming) => admit(incoming, token),
    handle: async (incoming, request) => {
      const signal = signalFromHook(request);
      // Only an upload carries files in its body (as base64): it alone may be larger.
      const limit = incoming.method === 'POST' && new URL(incoming.url ?? '/', 'http://127.0.0.1').pathname === '/hooks/file-chooser' ? BROWSER_CONTROL_MAX_UPLOAD_BODY : BROWSER_CONTROL_MAX_BODY;
      const read = await readBody(incoming, limit);
      if (read.kind === 'too-large') return error(413, `the body is over ${limit} bytes`, { connection: 'close' });
      if (read.kind === 'aborted') return undefined;
      let body: unknown;
      if (read.text.trim() !== '') {
        try {
          body = JSON.parse(read.text);
        } catch {
          return error(400, 'the body is not valid JSON');
        }
      }
      const url = new URL(incoming.url ?? '/', 'http://127.0.0.1');
      const answer = await options.dispatch({ method: incoming.method ?? 'GET', path: url.pathname, query: queryOf(url), body, signal });
      return jsonReply(JSON.stringify(answer.body), answer.status);
    },
    replies: {
      forbiddenPeer: error(403, 'only loopback peers are served', { connection: 'close' }),
      shuttingDown: error(503, 'the browser-control service is shutting down', { connection: 'close' }),
      busy: error(503, 'the browser-control service is busy', { 'retry-after': '1' }),
      timeout: error(504, 'the request timed out'),
      internal,
    },
    onLog: (level, message) => {
      if (level === 'error') options.onError?.(new Error(message));
    },
  });
  const server = createServer(kernel.listener);
  server.maxConnections = 64;
  const address = await listenOn(server, options.port, '127.0.0.1');
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => (closed ??= kernel.drain(server, { drainTimeoutMs: 2000, abortFirst: true }));
  return { url: originOf(address), port: address.port, close, [Symbol.asyncDispose]: close };
}
