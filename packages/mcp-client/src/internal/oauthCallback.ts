import { createServer, type IncomingMessage } from 'node:http';
import { createHttpKernel, listenOn, type HttpReply } from '@capnode/toolkit/http';
import { armDeadline, type DeadlineTimer } from '@capnode/toolkit';
import { McpClientError } from '../errors.js';

/** What the authorization server sent back to the loopback redirect. */
export interface OAuthCallback {
  readonly code: string;
  /** RFC 9207 issuer, validated by the SDK before the code is redeemed. */
  readonly iss?: string;
}

/** A loopback listener for OAuth redirects (`http://127.0.0.1:<port>/callback`, RFC 8252 §7.3). */
export interface OAuthCallbackListener {
  readonly redirectUrl: string;
  /** Waits for the redirect carrying `state`; rejects on an error answer, `signal` or `timeoutMs`. */
  waitFor(state: string, options: { readonly signal?: AbortSignal; readonly timeoutMs: number }): Promise<OAuthCallback>;
  close(): Promise<void>;
}

const CALLBACK_PATH = '/callback';
const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>capnode</title><body style="font-family:sans-serif"><p>${text}</p></body>`;

function respond(status: number, text: string): HttpReply {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' }, body: PAGE(text) };
}

interface Waiter {
  readonly state: string;
  resolve(callback: OAuthCallback): void;
  reject(error: Error): void;
}

/** Starts the listener on 127.0.0.1 (`port` 0: a free port). Only `GET /callback` with the expected `state` is accepted. */
export async function startOAuthCallbackListener(port = 0): Promise<OAuthCallbackListener> {
  let waiter: Waiter | undefined;
  const handle = (req: IncomingMessage): HttpReply => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return respond(404, 'Not found.');
    const params = url.searchParams;
    if (!waiter || params.get('state') !== waiter.state) return respond(400, 'This authorization response was not expected (unknown or missing state). Start again with capnode servers login.');
    const current = waiter;
    waiter = undefined;
    const error = params.get('error');
    const code = params.get('code');
    if (error !== null || !code) {
      // The error text comes from whoever sent the browser here: only a well-formed code is repeated.
      const safe = error !== null && /^[a-z_]{1,64}$/.test(error) ? error : 'no code';
      current.reject(new McpClientError('auth_failed', `the authorization server did not grant access (${safe})`));
      return respond(400, 'Authorization failed. You can close this tab.');
    }
    const iss = params.get('iss');
    current.resolve({ code, ...(iss === null ? {} : { iss }) });
    return respond(200, 'Authorization complete. You can close this tab and return to capnode.');
  };
  const internal = respond(500, 'Internal error.');
  const kernel = createHttpKernel({
    handle,
    replies: { forbiddenPeer: respond(403, 'Forbidden.'), shuttingDown: respond(503, 'Closing.'), busy: internal, timeout: internal, internal },
    onLog: () => {},
  });
  const server = createServer(kernel.listener);
  server.keepAliveTimeout = 1_000;
  let bound: number;
  try {
    bound = (await listenOn(server, port, '127.0.0.1')).port;
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    throw new McpClientError('auth_failed', `cannot listen for the OAuth redirect on 127.0.0.1:${port}: ${cause.code ?? cause.message}`, { cause });
  }

  return {
    redirectUrl: `http://127.0.0.1:${bound}${CALLBACK_PATH}`,
    waitFor(state, { signal, timeoutMs }) {
      waiter?.reject(new McpClientError('auth_failed', 'a newer authorization request replaced this one'));
      const cancelled = (reason: unknown) => new McpClientError('auth_failed', 'the authorization was cancelled', { cause: reason });
      if (signal?.aborted) return Promise.reject(cancelled(signal.reason));
      return new Promise<OAuthCallback>((resolve, reject) => {
        let deadline: DeadlineTimer | undefined;
        const cleanup = () => {
          deadline?.clear();
          if (waiter === entry) waiter = undefined;
        };
        const entry: Waiter = {
          state,
          resolve: (value) => {
            cleanup();
            resolve(value);
          },
          reject: (error) => {
            cleanup();
            reject(error);
          },
        };
        deadline = armDeadline(signal === undefined ? { timeoutMs } : { timeoutMs, signal }, (reason, timedOut) => {
          cleanup();
          reject(timedOut ? new McpClientError('auth_failed', `no authorization response within ${Math.round(timeoutMs / 1000)} s`) : cancelled(reason));
        });
        waiter = entry;
      });
    },
    close() {
      waiter?.reject(new McpClientError('auth_failed', 'the authorization listener closed'));
      return kernel.drain(server, { drainTimeoutMs: 0, abortFirst: true });
    },
  };
}
