import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createHost } from '@capnode/host';
import { startTestHost, tempDir } from '../support/testHost.js';
import { dashboardBase, rawRequest, signIn } from './apiClient.js';
import { adminToken, mintLoginUrl } from '../support/dashboardLogin.js';
import { freePort } from '../support/net.js';

const mcpToken = (home: string) => readFileSync(join(home, 'mcp-token'), 'utf8').trim();

function noCors(response: { headers: Headers } | { headers: Record<string, unknown> }): void {
  const names = response.headers instanceof Headers ? [...response.headers.keys()] : Object.keys(response.headers);
  expect(names.filter((name) => name.toLowerCase().startsWith('access-control-'))).toEqual([]);
}

describe('dashboard sign-in', () => {
  it('publishes its loopback URL in the status and host.json', async () => {
    await using test = await startTestHost();
    const dashboard = test.host.status().dashboard;
    expect(dashboard.state).toBe('listening');
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(dashboard.url).not.toBe(test.url);
    const runtime = JSON.parse(readFileSync(join(test.home, 'host.json'), 'utf8')) as { dashboardUrl?: string };
    expect(runtime.dashboardUrl).toBe(dashboard.url);
  });

  it('exchanges a one-time code once for an HttpOnly SameSite=Strict cookie scoped to the secret base path; a second use is refused', async () => {
    await using test = await startTestHost();
    const url = await mintLoginUrl(test.host, test.home);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=[A-Za-z0-9_-]{43}$/);
    expect((await fetch(url, { method: 'HEAD', redirect: 'manual' })).status).toBe(405);
    const first = await fetch(url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location).toMatch(/^\/d\/[A-Za-z0-9_-]{43}\/$/);
    const [cookie] = first.headers.getSetCookie();
    // Not Path=/: cookies are not isolated by port, and every other server on 127.0.0.1 would get it.
    expect(cookie).toMatch(/^capnode_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/d\/[A-Za-z0-9_-]{43}\/$/);
    expect(cookie!.endsWith(`Path=${location}`)).toBe(true);
    const again = await fetch(url, { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(again.headers.getSetCookie()).toEqual([]);
    expect(await again.text()).toContain('capnode ui');
    const session = await fetch(new URL(`${location}api/session`, url), { headers: { cookie: cookie!.split(';')[0]! } });
    expect(session.status).toBe(200);
    expect(await session.json()).toEqual({ csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), version: expect.any(String), firstRun: false });
  });

  it('refuses a login code after 60 s, and a session after 12 h idle', async () => {
    await using test = await startTestHost();
    const stale = await mintLoginUrl(test.host, test.home);
    const client = await signIn(test.host, test.home);
    // Only the clock is faked: sockets and timers stay real.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 60_001);
      expect((await fetch(stale, { redirect: 'manual' })).status).toBe(403);
      expect((await client.api('/api/status')).status).toBe(200);
      vi.setSystemTime(Date.now() + 12 * 60 * 60_000 + 1);
      expect((await client.api('/api/status')).status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
  });

  it('without a session, / says to use capnode ui and /api is 401; the admin login route needs the admin token', async () => {
    await using test = await startTestHost();
    const origin = test.host.status().dashboard.url!;
    const page = await fetch(origin);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('capnode ui');
    const { base } = await signIn(test.host, test.home);
    expect((await fetch(`${base}/api/status`)).status).toBe(401);
    expect((await fetch(`${base}/`)).status).toBe(200);
    expect(await (await fetch(`${base}/`)).text()).toContain('capnode ui');
    expect((await fetch(new URL('/login?code=guess', origin), { redirect: 'manual' })).status).toBe(403);
    // An agent holding only the MCP token cannot mint a dashboard login (it could approve its own calls).
    const withMcpToken = await fetch(new URL('/_capnode/ui/login', test.url), { method: 'POST', headers: { authorization: `Bearer ${mcpToken(test.home)}` } });
    expect(withMcpToken.status).toBe(401);
  });

  it('says first run, and sends to /setup, when no settings.json existed before the start', async () => {
    using dir = tempDir();
    await using fresh = createHost({ home: dir.path, port: 0, onLog: () => undefined });
    await fresh.start();
    const loginUrl = await mintLoginUrl(fresh, dir.path);
    const login = await fetch(loginUrl, { redirect: 'manual' });
    expect(login.headers.get('location')).toMatch(/^\/d\/[A-Za-z0-9_-]{43}\/setup$/);
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    const session = (await (await fetch(`${dashboardBase(loginUrl, login)}/api/session`, { headers: { cookie } })).json()) as { firstRun: boolean };
    expect(session.firstRun).toBe(true);
  });

  it('a gateway-node-only host (no MCP listener) serves the dashboard, signed in through its admin-only listener', async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, 'settings.json'), JSON.stringify({ mcp: { enabled: false }, gateway: { enabled: true, url: `ws://127.0.0.1:${await freePort()}` } }), { mode: 0o600 });
    await using host = createHost({ home: dir.path, onLog: () => undefined });
    const status = await host.start();
    expect(status.mcp.state).toBe('disabled');
    expect(status.dashboard.state).toBe('listening');
    const url = await mintLoginUrl(host, dir.path);
    expect(url.startsWith(status.dashboard.url!)).toBe(true);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(303);
  });

  it('a busy dashboard port is reported in the status and does not stop the host', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as AddressInfo).port;
      await using test = await startTestHost({ settings: { dashboard: { port } } });
      expect(test.host.status().dashboard).toEqual({ state: 'error', error: expect.stringContaining(`port ${port} is already in use`) });
      expect((await test.client.listTools()).tools.length).toBeGreaterThan(0);
      expect(test.logs.some((line) => line.includes(`port ${port} is already in use`))).toBe(true);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('is off with dashboard.enabled false: no listener, and the login route says so', async () => {
    await using test = await startTestHost({ settings: { dashboard: { enabled: false } } });
    expect(test.host.status().dashboard).toEqual({ state: 'disabled' });
    const response = await fetch(new URL('/_capnode/ui/login', test.url), { method: 'POST', headers: { authorization: `Bearer ${adminToken(test.home)}` } });
    expect(response.status).toBe(409);
  });
});

describe('dashboard against other origins', () => {
  it('a page of another origin can neither read nor change anything', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const before = mcpToken(test.home);
    // Reads: a foreign Origin or cross-site fetch metadata is refused, and no CORS header ever lets a page read.
    for (const headers of [{ origin: 'http://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }]) {
      const response = await client.api('/api/token/reveal', { method: 'GET', headers });
      expect(response.status).toBe(403);
      noCors(response);
      const status = await fetch(`${client.base}/api/status`, { headers: { cookie: client.cookie, ...headers } });
      expect(status.status).toBe(403);
      noCors(status);
    }
    const preflight = await fetch(`${client.base}/api/settings`, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'PATCH' } });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    noCors(preflight);
    // Changes: forged Origin, missing Origin, wrong or missing CSRF token are all 403, and nothing changed.
    const attempts: Record<string, string>[] = [
      { cookie: client.cookie, origin: 'http://evil.example', 'x-csrf-token': client.csrfToken },
      { cookie: client.cookie, 'x-csrf-token': client.csrfToken },
      { cookie: client.cookie, origin: client.origin, 'x-csrf-token': 'not-the-token' },
      { cookie: client.cookie, origin: client.origin },
      { cookie: client.cookie, origin: client.origin.replace('127.0.0.1', 'localhost'), 'x-csrf-token': client.csrfToken },
    ];
    for (const headers of attempts) {
      const rotate = await fetch(`${client.base}/api/token/rotate`, { method: 'POST', headers });
      expect(rotate.status, JSON.stringify(Object.keys(headers))).toBe(403);
      const patch = await fetch(`${client.base}/api/settings`, { method: 'PATCH', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ execApprovals: { mode: 'full' } }) });
      expect(patch.status).toBe(403);
    }
    // A form post of another site (no custom header, text/plain) is refused the same way.
    const form = await fetch(`${client.base}/api/settings`, { method: 'PATCH', headers: { cookie: client.cookie, origin: 'http://evil.example', 'content-type': 'text/plain' }, body: '{"execApprovals":{"mode":"full"}}' });
    expect(form.status).toBe(403);
    expect(mcpToken(test.home)).toBe(before);
    expect(test.host.settings.reload().execApprovals.mode).toBe('ask');
  });

  it('refuses a foreign Host header (DNS rebinding), even with a valid session', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const port = new URL(client.origin).port;
    for (const host of [`evil.example:${port}`, `localhost:${port}`, '127.0.0.1', `127.0.0.1:${Number(port) + 1}`]) {
      const response = await rawRequest(`${client.base}/api/status`, 'GET', { host, cookie: client.cookie });
      expect(response.status, host).toBe(403);
      expect(response.body).not.toContain('"mcp"');
    }
    const page = await rawRequest(`${client.origin}/`, 'GET', { host: `rebound.example:${port}` });
    expect(page.status).toBe(403);
    const ok = await rawRequest(`${client.base}/api/status`, 'GET', { host: `127.0.0.1:${port}`, cookie: client.cookie });
    expect(ok.status).toBe(200);
  });

  it('the MCP token alone gets 401 on /api, and a dashboard session gets 401 on the MCP endpoint', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const bearer = { authorization: `Bearer ${mcpToken(test.home)}` };
    for (const path of ['/api/session', '/api/status', '/api/token', '/api/approvals', '/api/events']) {
      expect((await fetch(`${client.base}${path}`, { headers: bearer })).status, path).toBe(401);
    }
    expect((await fetch(`${client.base}/api/token/reveal`, { method: 'POST', headers: { ...bearer, origin: client.origin } })).status).toBe(401);
    // A bearer token next to a valid cookie is refused too: the API never looks at Authorization.
    expect((await fetch(`${client.base}/api/status`, { headers: { ...bearer, cookie: client.cookie } })).status).toBe(401);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const mcp = await fetch(test.url, { method: 'POST', headers: { cookie: client.cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
    expect(mcp.status).toBe(401);
    const admin = await fetch(new URL('/_capnode/status', test.url), { headers: { cookie: client.cookie } });
    expect(admin.status).toBe(401);
    // From the dashboard's own origin (a page of the dashboard calling MCP) the MCP endpoint refuses it outright.
    const fromPage = await fetch(test.url, { method: 'POST', headers: { cookie: client.cookie, origin: client.origin, 'content-type': 'application/json' }, body });
    expect(fromPage.status).toBe(403);
  });

  it('outside the secret base path, even with the session cookie, only /login and the capnode ui page answer', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const { origin, base, cookie } = client;
    const basePath = new URL(base).pathname;
    const other = `/d/${'A'.repeat(43)}`;
    for (const path of ['/api/session', '/api/status', '/api/token', '/api/events', '/app.js', '/index.html', '/setup', `${other}/`, `${other}/api/session`, `${basePath}x/api/session`, `/x${basePath}/api/session`]) {
      const response = await fetch(`${origin}${path}`, { headers: { cookie } });
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).not.toMatch(/csrfToken|"mcp"|app\.js/);
    }
    const changed = await fetch(`${origin}/api/token/rotate`, { method: 'POST', headers: { cookie, origin, 'x-csrf-token': client.csrfToken } });
    expect(changed.status).toBe(405);
    // The bare origin only says how to open the dashboard; the base path without its slash goes to the base.
    const root = await fetch(`${origin}/`, { headers: { cookie } });
    expect(root.status).toBe(200);
    expect(await root.text()).toContain('capnode ui');
    const bare = await fetch(`${origin}${basePath}`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, `${basePath}/`]);
    // Under the base path, the same cookie works; page paths are one segment deep.
    expect((await fetch(`${base}/api/session`, { headers: { cookie } })).status).toBe(200);
    expect(await (await fetch(`${base}/setup`, { headers: { cookie } })).text()).toContain('app.js');
    expect((await fetch(`${base}/setup/deeper`, { headers: { cookie } })).status).toBe(404);
    // Sign-out clears the cookie on the same Path it was set on.
    const out = await client.api('/api/session', { method: 'DELETE' });
    expect(out.headers.getSetCookie()).toEqual([`capnode_session=; HttpOnly; SameSite=Strict; Path=${basePath}/; Max-Age=0`]);
  });

  it('sessions end when the host closes', async () => {
    const test = await startTestHost();
    const client = await signIn(test.host, test.home);
    expect((await client.api('/api/status')).status).toBe(200);
    const url = await mintLoginUrl(test.host, test.home);
    await test[Symbol.asyncDispose]();
    expect(test.host.status().dashboard.state).toBe('stopped');
    await expect(fetch(url)).rejects.toThrow();
  });
});
