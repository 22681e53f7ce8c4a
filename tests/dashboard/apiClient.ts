import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Host } from '@capnode/host';
import { mintLoginUrl } from '../support/dashboardLogin.js';

/** A host environment whose user lives in `userHome`: HOME, XDG_CONFIG_HOME and APPDATA (where client configs are looked for). */
export function userHomeEnv(userHome: string): Record<string, string | undefined> {
  return { ...process.env, HOME: userHome, XDG_CONFIG_HOME: join(userHome, '.config'), APPDATA: join(userHome, 'AppData') };
}

/** A signed-in browser as the dashboard sees it: its cookie, CSRF token, origin and base URL. */
export interface DashboardClient {
  readonly origin: string;
  /** `http://127.0.0.1:<port>/d/<random>` (no trailing slash): where the login redirect sent the browser. */
  readonly base: string;
  readonly cookie: string;
  readonly csrfToken: string;
  /** fetch on the dashboard (`path` under {@link base}) with the cookie; state-changing methods get Origin and X-CSRF-Token. */
  api(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
}

/** The dashboard's base URL (`http://127.0.0.1:<port>/d/<random>`, no trailing slash) from the 303 of `GET /login`. */
export function dashboardBase(loginUrl: string, redirect: Response): string {
  const location = new URL(redirect.headers.get('location')!, loginUrl);
  const match = /^\/d\/[^/]+/.exec(location.pathname);
  if (!match) throw new Error(`login redirected outside a base path: ${location.href}`);
  return location.origin + match[0];
}

/** Exchanges a fresh login URL for a session, as a browser following `capnode ui` does. */
export async function signIn(host: Host, home: string): Promise<DashboardClient> {
  const url = await mintLoginUrl(host, home);
  const response = await fetch(url, { redirect: 'manual' });
  if (response.status !== 303) throw new Error(`login answered ${response.status}`);
  const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!;
  const origin = new URL(url).origin;
  const base = dashboardBase(url, response);
  const session = (await (await fetch(`${base}/api/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  const csrfToken = session.csrfToken;
  return {
    origin,
    base,
    cookie,
    csrfToken,
    api(path, init = {}) {
      const method = init.method ?? 'GET';
      const changing = method !== 'GET' && method !== 'HEAD';
      return fetch(`${base}${path}`, {
        method,
        headers: {
          cookie,
          ...(changing ? { origin, 'x-csrf-token': csrfToken, 'content-type': 'application/json' } : {}),
          ...init.headers,
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
    },
  };
}

/** One raw HTTP/1.1 request with exactly these headers (Host included), for forged headers fetch will not send. */
export function rawRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers, agent: false, setHost: false }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Reads the server-sent events of `response`: `next(name, predicate)` resolves with the data of the next matching event. */
export function eventReader(response: Response): { next(name: string, predicate?: (data: unknown) => boolean): Promise<unknown>; cancel(): Promise<void> } {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next(name, predicate = () => true) {
      for (;;) {
        let index: number;
        while ((index = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, index);
          buffer = buffer.slice(index + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event === name && data !== undefined) {
            const parsed: unknown = JSON.parse(data);
            if (predicate(parsed)) return parsed;
          }
        }
        const { done, value } = await reader.read();
        if (done) throw new Error(`event stream ended before a matching '${name}' event`);
        buffer += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}
