import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardBase, rawRequest, signIn, type DashboardClient } from '../dashboard/apiClient.js';
import { mintLoginUrl } from '../support/dashboardLogin.js';
import { startTestHost, type TestHost } from '../support/testHost.js';

/**
 * Attacks on the dashboard's own listener with real sockets: forged Origin and Host headers, CSRF
 * tokens of other sessions, login code races, static path traversal, oversized bodies, and what a
 * session can change. One real host for the whole file (each attack is a few requests).
 */
let test: TestHost;
let client: DashboardClient;
let port: string;

beforeAll(async () => {
  test = await startTestHost();
  client = await signIn(test.host, test.home);
  port = new URL(client.origin).port;
});
afterAll(async () => {
  await test?.[Symbol.asyncDispose]();
});

const mcpToken = () => readFileSync(join(test.home, 'mcp-token'), 'utf8').trim();

/** POST /api/token/reveal with exactly these headers on a raw socket. */
function reveal(headers: Record<string, string>) {
  return rawRequest(`${client.base}/api/token/reveal`, 'POST', { host: `127.0.0.1:${port}`, cookie: client.cookie, 'x-csrf-token': client.csrfToken, ...headers });
}

describe('dashboard login code', () => {
  it('two parallel exchanges of one code give one session; HEAD spends nothing; the code is never logged', async () => {
    const url = await mintLoginUrl(test.host, test.home);
    const head = await fetch(url, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(405);
    const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(url, { redirect: 'manual' })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([303, 403, 403, 403, 403, 403, 403, 403]);
    const winner = answers.find((answer) => answer.status === 303)!;
    expect(winner.headers.get('referrer-policy')).toBe('no-referrer');
    expect(winner.headers.get('cache-control')).toBe('no-store');
    const cookie = winner.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\/d\/[A-Za-z0-9_-]{43}\/$/);
    const code = new URL(url).searchParams.get('code')!;
    expect(code.length).toBeGreaterThanOrEqual(43);
    expect(test.logs.join('\n')).not.toContain(code);
  });

  it('a cookie the attacker chose (session fixation) is never adopted, and a wrong code gets no cookie', async () => {
    const url = await mintLoginUrl(test.host, test.home);
    const fixed = 'capnode_session=attacker-chosen';
    const login = await fetch(url, { redirect: 'manual', headers: { cookie: fixed } });
    expect(login.status).toBe(303);
    expect(login.headers.getSetCookie()[0]).not.toContain('attacker-chosen');
    expect((await fetch(`${client.base}/api/session`, { headers: { cookie: fixed } })).status).toBe(401);
    const wrong = await fetch(`${client.origin}/login?code=${'A'.repeat(43)}`, { redirect: 'manual' });
    expect(wrong.status).toBe(403);
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });
});

describe('dashboard base path (cookies are not isolated by port)', () => {
  it('the cookie is scoped to a random base path per host; with it, a server that forges Origin and Host gets nothing outside that path', async () => {
    const basePath = new URL(client.base).pathname;
    expect(basePath).toMatch(/^\/d\/[A-Za-z0-9_-]{43}$/);
    const url = await mintLoginUrl(test.host, test.home);
    const login = await fetch(url, { redirect: 'manual' });
    expect(login.headers.getSetCookie()[0]).toMatch(new RegExp(`; Path=${basePath}/$`));
    expect(new URL(dashboardBase(url, login)).pathname).toBe(basePath);
    // What another loopback server that received the cookie would do: read the CSRF token, then change things.
    const forged = { host: `127.0.0.1:${port}`, origin: client.origin, cookie: client.cookie, 'sec-fetch-site': 'same-origin' };
    const guesses = ['', '/d', '/d/', `/d/${'A'.repeat(43)}`, basePath.toUpperCase(), basePath.slice(0, -1), `${basePath}%2F..`, `/%64/${basePath.slice(3)}`];
    for (const prefix of guesses) {
      const session = await rawRequest(`${client.origin}${prefix}/api/session`, 'GET', forged);
      expect(session.status, prefix).toBe(404);
      expect(session.body, prefix).not.toContain(client.csrfToken);
      const rotate = await rawRequest(`${client.origin}${prefix}/api/token/rotate`, 'POST', { ...forged, 'x-csrf-token': client.csrfToken });
      expect(rotate.status, prefix).toBeGreaterThanOrEqual(400);
      const stdio = await rawRequest(`${client.origin}${prefix}/api/servers`, 'POST', { ...forged, 'x-csrf-token': client.csrfToken, 'content-type': 'application/json' }, JSON.stringify({ name: 'pwn', command: 'touch', args: ['/tmp/pwned'] }));
      expect(stdio.status, prefix).toBeGreaterThanOrEqual(400);
    }
    expect(JSON.stringify(test.host.settings.reload().mcpClient ?? {})).not.toContain('pwn');
    // Another host instance has another base path.
    await using second = await startTestHost();
    const other = await signIn(second.host, second.home);
    expect(new URL(other.base).pathname).not.toBe(basePath);
  });
});

describe('dashboard Origin and Host', () => {
  it('refuses every Origin that is not exactly the dashboard\u2019s: null, case, trailing slash, suffix, other loopback spellings', async () => {
    const before = mcpToken();
    const origins = [
      'null',
      `HTTP://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}/`,
      `http://127.0.0.1:${port}.evil`,
      `http://127.0.0.1:${port}@evil.example`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      `http://[::ffff:127.0.0.1]:${port}`,
      `http://127.0.0.2:${port}`,
      `http://2130706433:${port}`,
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}, http://evil.example`,
      '',
    ];
    for (const origin of origins) {
      const answer = await reveal({ origin });
      expect(answer.status, JSON.stringify(origin)).toBe(403);
      expect(answer.body).not.toContain(before);
    }
    // The exact origin works (so the refusals above are the Origin's doing).
    expect((await reveal({ origin: client.origin })).status).toBe(200);
  });

  it('refuses every Host but 127.0.0.1:<port>: suffixes, case, IPv6, numeric and absolute-form targets', async () => {
    const hosts = [`127.0.0.1:${port}.evil`, `LOCALHOST:${port}`, `[::1]:${port}`, `2130706433:${port}`, `127.0.0.1:0${port}`, ''];
    for (const host of hosts) {
      const answer = await rawRequest(`${client.base}/api/status`, 'GET', { host, cookie: client.cookie });
      expect(answer.status, JSON.stringify(host)).toBeGreaterThanOrEqual(400);
      expect(answer.body).not.toContain('"mcp"');
    }
    // An absolute-form request target naming another host is served as a path of this one, never proxied.
    const absolute = await rawRequest(`${client.origin}/`, 'GET', { host: `127.0.0.1:${port}` });
    expect(absolute.status).toBe(200);
  });
});

describe('dashboard CSRF token', () => {
  it('missing, empty, another session\u2019s, or in the query string: refused, nothing changes', async () => {
    const other = await signIn(test.host, test.home);
    const before = mcpToken();
    const attempts: Record<string, string>[] = [{ 'x-csrf-token': '' }, { 'x-csrf-token': other.csrfToken }, { 'x-csrf-token': client.csrfToken.toUpperCase() }];
    for (const headers of attempts) {
      const answer = await rawRequest(`${client.base}/api/token/rotate`, 'POST', { host: `127.0.0.1:${port}`, cookie: client.cookie, origin: client.origin, ...headers });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
    }
    const inQuery = await rawRequest(`${client.base}/api/token/rotate?csrf=${client.csrfToken}&x-csrf-token=${client.csrfToken}`, 'POST', { host: `127.0.0.1:${port}`, cookie: client.cookie, origin: client.origin });
    expect(inQuery.status).toBe(403);
    expect(mcpToken()).toBe(before);
  });

  it('the event stream and every read need the session; the MCP token never stands in', async () => {
    for (const path of ['/api/events', '/api/token', '/api/settings', '/api/activity', '/api/servers']) {
      const answer = await rawRequest(`${client.base}${path}`, 'GET', { host: `127.0.0.1:${port}`, authorization: `Bearer ${mcpToken()}` });
      expect(answer.status, path).toBe(401);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
    }
  });
});

describe('dashboard static files and headers', () => {
  it('no path reaches outside the UI directory: encoded dots and slashes, backslashes, double encoding', async () => {
    const paths = [
      '/..%2f..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/assets/..%5c..%5c..%5cpackage.json',
      '/assets/..\\..\\..\\..\\package.json',
      '/%252e%252e/%252e%252e/package.json',
      '/....//....//package.json',
      '/assets/%00.js',
      '/etc/passwd%00.js',
      '//etc/passwd.json',
    ];
    for (const path of paths) {
      for (const base of [client.origin, client.base]) {
        const answer = await rawRequest(`${base}${path}`, 'GET', { host: `127.0.0.1:${port}` });
        expect(answer.status, path).not.toBe(200);
        expect(answer.body, path).not.toContain('"devDependencies"');
        expect(answer.body, path).not.toContain('root:');
      }
    }
  });

  it('pages forbid framing and sniffing; API answers, the token reveal included, are never cached', async () => {
    const page = await fetch(`${client.base}/`, { headers: { cookie: client.cookie } });
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const signedOut = await fetch(`${client.base}/`);
    expect(signedOut.headers.get('x-frame-options')).toBe('DENY');
    const token = await client.api('/api/token/reveal', { method: 'POST' });
    expect(token.status).toBe(200);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(token.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('dashboard request bodies', () => {
  it('a body over 1 MiB is 413 and the host keeps serving; arrays, strings and bad JSON are 400', async () => {
    const big = JSON.stringify({ execApprovals: { allowlist: ['x'.repeat(1024 * 1024 + 10)] } });
    const answer = await client.api('/api/settings', { method: 'PATCH', body: JSON.parse(big) as unknown });
    expect(answer.status).toBe(413);
    for (const body of ['[]', '"x"', '{', 'null']) {
      const bad = await rawRequest(`${client.base}/api/settings`, 'PATCH', { host: `127.0.0.1:${port}`, cookie: client.cookie, origin: client.origin, 'x-csrf-token': client.csrfToken, 'content-type': 'application/json' }, body);
      expect(bad.status, body).toBe(400);
    }
    expect((await client.api('/api/status')).status).toBe(200);
  });
});

describe('what a dashboard session can change', () => {
  it('cannot bind the MCP listener off loopback, nor write unknown keys; every change and reveal is logged by path, never by value', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '127.0.0.1.evil.example', 'localhost.evil.example']) {
      const answer = await client.api('/api/settings', { method: 'PATCH', body: { mcp: { host } } });
      expect(answer.status, host).toBe(400);
      expect(((await answer.json()) as { error: { fields: { path: string }[] } }).error.fields[0]!.path).toBe('mcp.host');
    }
    expect((await client.api('/api/settings', { method: 'PATCH', body: { execApprovals: { mode: 'full', extra: 1 } } })).status).toBe(400);
    expect(test.host.settings.reload().mcp.host).toBe('127.0.0.1');
    expect(test.host.settings.reload().execApprovals.mode).toBe('ask');

    test.logs.length = 0;
    const change = await client.api('/api/settings', { method: 'PATCH', body: { consent: { screen: 'ask' }, gateway: { token: 'sekret-gateway-token-1234' } } });
    expect(change.status).toBe(200);
    await client.api('/api/token/reveal', { method: 'POST' });
    const log = test.logs.join('\n');
    expect(log).toMatch(/dashboard: settings changed: .*consent\.screen/);
    expect(log).toMatch(/dashboard: settings changed: .*gateway\.token/);
    expect(log).toContain('dashboard: the MCP token was revealed');
    expect(log).not.toContain('sekret-gateway-token-1234');
    expect(log).not.toContain(mcpToken());
    await client.api('/api/settings', { method: 'PATCH', body: { consent: { screen: null }, gateway: { token: null } } });
  });

  it('secrets nested in servers (OAuth client_secret) and plugin settings are shown masked, and a masked value sent back keeps the stored one', async () => {
    const server = { name: 'remote', url: 'https://mcp.example/mcp', auth: { type: 'oauth', client_id: 'id', client_secret: 'oauth-client-secret-9876' } };
    const written = await client.api('/api/settings', { method: 'PATCH', body: { mcpClient: { servers: [server] }, pluginSettings: { weather: { apiKey: 'weather-api-key-5555', nested: { token: 'nested-token-4444' }, city: 'Oslo' } } } });
    expect(written.status).toBe(200);
    const secrets = ['oauth-client-secret-9876', 'weather-api-key-5555', 'nested-token-4444'];
    const settingsText = await (await client.api('/api/settings')).text();
    const serversText = await (await client.api('/api/servers')).text();
    for (const secret of secrets) {
      expect(settingsText).not.toContain(secret);
      expect(serversText).not.toContain(secret);
      expect(JSON.stringify(written.headers)).not.toContain(secret);
    }
    expect(settingsText).toContain('Oslo');
    // The page sends the masked form back with another edit: the stored secrets stay.
    const shown = (JSON.parse(settingsText) as { settings: { pluginSettings: Record<string, Record<string, unknown>> } }).settings.pluginSettings;
    expect((await client.api('/api/settings', { method: 'PATCH', body: { pluginSettings: { weather: { ...shown.weather, city: 'Bergen' } } } })).status).toBe(200);
    const stored = test.host.settings.reload();
    expect(stored.pluginSettings.weather).toEqual({ apiKey: 'weather-api-key-5555', nested: { token: 'nested-token-4444' }, city: 'Bergen' });
    expect(JSON.stringify(stored.mcpClient)).toContain('oauth-client-secret-9876');
    await client.api('/api/settings', { method: 'PATCH', body: { mcpClient: null, pluginSettings: { weather: null } } });
  });

  it('signing out ends the session on the host, not only in the browser', async () => {
    const session = await signIn(test.host, test.home);
    expect((await session.api('/api/status')).status).toBe(200);
    const out = await session.api('/api/session', { method: 'DELETE' });
    expect(out.status).toBe(200);
    // A copy of the cookie (another tab, a stolen value) no longer opens anything.
    expect((await session.api('/api/status')).status).toBe(401);
    expect((await fetch(`${session.base}/`, { headers: { cookie: session.cookie } })).headers.get('content-type')).toMatch(/html/);
    // Other sessions stay.
    expect((await client.api('/api/status')).status).toBe(200);
  });
});
