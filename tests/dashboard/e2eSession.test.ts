// The dashboard in real Chromium: the one-time login URL, its refusal on reuse, a session cookie
// that never reaches another loopback server, and a page of another loopback origin that can
// neither read nor change anything.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newContext, openDashboard, type TestBrowser } from '../support/browser.js';
import { mintLoginUrl } from '../support/dashboardLogin.js';
import { createHost } from '@capnode/host';
import { startTestHost, tempDir, type TestHost } from '../support/testHost.js';

let browser: TestBrowser;
let test: TestHost;
let token: string;
let dashboard: string;
/** `http://127.0.0.1:<port>/d/<random>` (no trailing slash): where the login sends the browser. */
let base: string;

beforeAll(async () => {
  browser = await launchBrowser();
  test = await startTestHost({ settings: { dashboard: { enabled: true, port: 0 } } });
  token = readFileSync(join(test.home, 'mcp-token'), 'utf8').trim();
  const url = (test.host.status() as { dashboard?: { url?: string } }).dashboard?.url;
  if (!url) throw new Error('the dashboard is not listening');
  dashboard = new URL(url).origin;
  const login = await fetch(await mintLoginUrl(test.host, test.home), { redirect: 'manual' });
  base = dashboard + /^\/d\/[^/]+/.exec(login.headers.get('location') ?? '')![0];
});

afterAll(async () => {
  await test?.[Symbol.asyncDispose]();
  await browser?.close();
});

/** A page server on another loopback port: another origin than the dashboard (same site: both 127.0.0.1). */
async function startOtherOrigin(html: string, host = '127.0.0.1'): Promise<{ url: string; requests: string[]; cookies: string[]; server: Server } & AsyncDisposable> {
  const requests: string[] = [];
  const cookies: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    cookies.push(request.headers.cookie ?? '');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    requests,
    cookies,
    server,
    // Chromium keeps (and preconnects) sockets a plain close() would wait for: end them all.
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('dashboard login (Chromium)', () => {
  it('the one-time URL signs a browser in with an HttpOnly SameSite=Strict cookie; a second use is refused', async () => {
    await using first = await newContext(browser);
    const url = await mintLoginUrl(test.host, test.home);
    expect(new URL(url).origin).toBe(dashboard);
    const page = await first.newPage();
    const response = await page.goto(url);
    expect(response?.ok()).toBe(true);
    await expect.poll(() => page.getByRole('navigation', { name: 'Dashboard' }).isVisible()).toBe(true);
    // The code left the address bar with the redirect, which went to the secret base path.
    expect(page.url()).not.toContain('code=');
    const landed = /^\/d\/[A-Za-z0-9_-]{43}\//.exec(new URL(page.url()).pathname)?.[0];
    expect(landed).toBe(`${new URL(base).pathname}/`);
    const cookie = (await first.cookies()).find((entry) => entry.name === 'capnode_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: landed, domain: '127.0.0.1' });
    // Not readable by the page's scripts either.
    expect(await page.evaluate(() => document.cookie)).not.toContain('capnode_session');

    await using second = await newContext(browser);
    const again = await second.newPage();
    const reused = await again.goto(url);
    expect(reused?.status()).toBe(403);
    expect(await second.cookies()).toEqual([]);
    // Without a session the dashboard says how to open it, and shows nothing of the host.
    const home = await again.goto(`${dashboard}/`);
    expect(home?.status()).toBeLessThan(500);
    await expect.poll(() => again.locator('body').innerText()).toContain('capnode ui');
    await expect.poll(() => again.getByRole('navigation', { name: 'Dashboard' }).count()).toBe(0);
    const api = await again.goto(`${base}/api/status`);
    expect(api?.status()).toBe(401);
    const outside = await page.goto(`${dashboard}/api/status`);
    expect(outside?.status()).toBe(404);
  });

  it('the session cookie never reaches another server on 127.0.0.1 (another port), whether visited or fetched', async () => {
    await using context = await newContext(browser);
    const page = await openDashboard(context, test.host, test.home);
    await using other = await startOtherOrigin('<!doctype html><title>dev server</title><p>untrusted packages run here</p>');
    // Control: a cookie of 127.0.0.1 with Path=/ does reach the other port (cookies are not isolated by port).
    await context.addCookies([{ name: 'control', value: '1', domain: '127.0.0.1', path: '/' }]);
    // The dashboard page itself cannot even send there (CSP connect-src 'self').
    const fromDashboard = await page.evaluate(async (url) => {
      const response = await fetch(`${url}api/session`, { credentials: 'include' }).catch((error: Error) => error);
      return response instanceof Error ? response.name : String(response.status);
    }, other.url);
    expect(fromDashboard).toBe('TypeError');
    // The user visits the other server in the same browser profile, and its page fetches with credentials.
    const visit = await context.newPage();
    await visit.goto(other.url);
    const fetched = await visit.evaluate(async () => {
      const out: number[] = [];
      for (const path of ['/api/session', '/d/another-base/api/session', '/login']) out.push((await fetch(path, { credentials: 'include' })).status);
      return out;
    });
    expect(fetched).toEqual([200, 200, 200]);
    // (Chromium may ask for /favicon.ico too, at its own time.)
    expect(other.requests.filter((line) => line !== 'GET /favicon.ico')).toEqual(['GET /', 'GET /api/session', 'GET /d/another-base/api/session', 'GET /login']);
    expect(other.cookies).toHaveLength(other.requests.length);
    for (const header of other.cookies) {
      expect(header).toContain('control=1');
      expect(header).not.toContain('capnode_session');
    }
    // The dashboard itself still has the session.
    expect(await page.evaluate(async () => (await fetch('api/session')).status)).toBe(200);
  });

  it('the tray\u2019s login link with #/approvals lands on the approvals page under the base path', async () => {
    await using context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${await mintLoginUrl(test.host, test.home)}#/approvals`);
    await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
    expect(page.url()).toBe(`${base}/#/approvals`);
  });

  it('an unknown code is refused and the page of another origin can neither read nor change anything', async () => {
    await using context = await newContext(browser);
    const unknown = await (await context.newPage()).goto(`${dashboard}/login?code=AAAAAAAAAAAAAAAAAAAAAAAA`);
    expect(unknown?.status()).toBe(403);

    await openDashboard(context, test.host, test.home);
    const settingsBefore = readFileSync(join(test.home, 'settings.json'), 'utf8');
    await using other = await startOtherOrigin('<!doctype html><title>other origin</title><p>another page</p>');
    const page = await context.newPage();
    await page.goto(other.url);

    // Reads: fetch with credentials is blocked by CORS (no Access-Control-Allow-Origin is ever sent).
    const reads = await page.evaluate(async (base) => {
      const out: string[] = [];
      for (const path of ['/api/status', '/api/token', '/api/session', '/api/settings']) {
        try {
          const response = await fetch(base + path, { credentials: 'include' });
          out.push(`read ${path}: ${response.status} ${await response.text()}`);
        } catch (error) {
          out.push(`blocked ${path}: ${(error as Error).name}`);
        }
      }
      return out;
    }, base);
    expect(reads).toEqual(['/api/status', '/api/token', '/api/session', '/api/settings'].map((path) => `blocked ${path}: TypeError`));

    // Writes: no-cors "simple" requests (no preflight) reach the server with the cookie and this
    // page's Origin, and are refused there.
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(dashboard)) statuses.push(response.status());
    });
    await page.evaluate(async (base) => {
      const writes: [string, string, string][] = [
        ['POST', '/api/token/rotate', '{}'],
        ['PATCH', '/api/settings', '{"execApprovals":{"mode":"full"}}'],
        ['POST', '/api/settings', '{"execApprovals":{"mode":"full"}}'],
        ['POST', '/api/approvals/x', '{"decision":"allow-once"}'],
      ];
      for (const [method, path, body] of writes) {
        await fetch(base + path, { method, mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body }).catch(() => undefined);
      }
    }, base);
    // A form POST (navigates, sends cookies for a same-site target).
    const formResponse = page.waitForResponse((response) => response.url().startsWith(`${base}/api/settings`));
    await page.evaluate((base) => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = `${base}/api/settings`;
      form.enctype = 'text/plain';
      const input = document.createElement('input');
      input.name = '{"execApprovals":{"mode":"full"},"x":"';
      input.value = '"}';
      form.append(input);
      document.body.append(form);
      form.submit();
    }, base);
    const form = await formResponse;
    expect(form.status()).toBeGreaterThanOrEqual(400);
    expect(form.status()).toBeLessThan(500);
    // PATCH is not a CORS-safelisted method: the browser preflights it and never sends it, so only
    // the POSTs arrive, each refused.
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    for (const status of statuses) expect(status === 403 || status === 405 || status === 401).toBe(true);
    expect(readFileSync(join(test.home, 'mcp-token'), 'utf8').trim()).toBe(token);
    expect(readFileSync(join(test.home, 'settings.json'), 'utf8')).toBe(settingsBefore);
  });

  it('a page on localhost (another origin again) cannot use the session either', async () => {
    await using context = await newContext(browser);
    await openDashboard(context, test.host, test.home);
    await using other = await startOtherOrigin('<!doctype html><title>localhost page</title>', 'localhost');
    const page = await context.newPage();
    await page.goto(other.url);
    const outcome = await page.evaluate(async (base) => {
      try {
        await fetch(`${base}/api/token/reveal`, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json', 'x-csrf-token': 'guess' }, body: '{}' });
        return 'read';
      } catch (error) {
        return (error as Error).name;
      }
    }, base);
    expect(outcome).toBe('TypeError');
    expect(readFileSync(join(test.home, 'mcp-token'), 'utf8').trim()).toBe(token);
  });

  it('a first run (no settings.json) lands on Setup: MCP on, token created, "Connect a client" next', async () => {
    using home = tempDir('capnode-first-run-');
    await using host = createHost({ home: home.path, port: 0, onLog: () => {} });
    const status = await host.start();
    expect(status.mcp.state).toBe('listening');
    await using context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(host.dashboardLoginUrl());
    await page.getByRole('heading', { level: 1, name: 'Setup' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/setup');
    await expect.poll(() => page.getByRole('region', { name: '1. The local MCP server is on' }).innerText()).toContain(status.mcp.url!);
    await expect.poll(() => page.getByRole('region', { name: '2. A token was created' }).innerText()).toContain(join(home.path, 'mcp-token'));
    await page.getByRole('link', { name: 'Connect a client' }).last().click();
    await page.getByRole('heading', { level: 1, name: 'Connect a client' }).waitFor();
  });
});
