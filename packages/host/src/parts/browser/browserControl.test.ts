import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { createBrowserCapability, findChromiumExecutable } from '@capnode/capabilities/pack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_PAGE, refFor, servePages, type PageServer } from '../../../../../tests/support/pages.js';
import { startBrowserControlListener, type BrowserControlListener } from './browserListener.js';
import { createBrowserRoutes } from './browserRoutes.js';

const chromium = findChromiumExecutable();
const TOKEN = 'test-token-0123456789';

describe.runIf(chromium)('the browser-control service over HTTP (real Chromium)', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'capnode-browser-control-'));
  const browser = createBrowserCapability({ profileDir: join(dir, 'profile'), headless: true });
  const invoker = createInvoker({ registry: createRegistry([browser]) });
  let listener: BrowserControlListener;
  let pages: PageServer;
  beforeAll(async () => {
    pages = await servePages({ '/form': FORM_PAGE, '/other': '<title>Other</title><p>other page</p>' });
    const routes = createBrowserRoutes({ mediaDir: join(dir, 'media'), invoke: async (command, args, signal) => (await invoker.invoke({ command, args, transport: 'internal' }, { signal })).result });
    listener = await startBrowserControlListener({ port: 0, token: TOKEN, dispatch: routes });
  });
  afterAll(async () => {
    await listener?.close();
    await browser.close();
    await pages?.[Symbol.asyncDispose]();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${listener.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it("serves OpenClaw's routes: status, tabs, open, navigate, snapshot, act, text, screenshot, close", async () => {
    expect(await request('GET', '/')).toMatchObject({ status: 200, body: { enabled: true, profile: 'capnode', running: false } });
    const opened = await request('POST', '/tabs/open', { url: pages.url('/form') });
    expect(opened).toMatchObject({ status: 200, body: { title: 'Form page', url: pages.url('/form'), type: 'page' } });
    const targetId = opened.body.targetId as string;
    expect((await request('GET', '/tabs')).body).toMatchObject({ running: true, tabs: [{ targetId, url: pages.url('/form') }] });
    expect((await request('GET', '/')).body).toMatchObject({ running: true, cdpReady: true });

    const snap = await request('GET', `/snapshot?targetId=${targetId}&format=ai`);
    expect(snap.body).toMatchObject({ ok: true, format: 'ai', targetId, url: pages.url('/form') });
    const snapshot = snap.body.snapshot as string;
    expect(await request('POST', '/act', { kind: 'type', ref: refFor(snapshot, 'textbox', 'Name'), text: 'Lin', targetId })).toMatchObject({ status: 200, body: { ok: true, targetId } });
    expect((await request('POST', '/act', { kind: 'click', ref: refFor(snapshot, 'button', 'Greet') })).status).toBe(200);
    expect((await request('GET', '/text?selector=%23out')).body).toMatchObject({ ok: true, text: 'Hello, Lin (red)', truncated: false });

    const shot = await request('POST', '/screenshot', { targetId });
    expect(shot.body).toMatchObject({ ok: true, targetId, path: expect.stringMatching(/browser-.*\.png$/) });
    expect(readFileSync(shot.body.path as string).subarray(1, 4).toString()).toBe('PNG');
    expect(shot.body.path.startsWith(join(dir, 'media'))).toBe(true);

    expect((await request('POST', '/navigate', { url: pages.url('/other'), targetId })).body).toMatchObject({ ok: true, targetId, url: pages.url('/other') });
    expect(await request('POST', '/act', { kind: 'click', ref: refFor(snapshot, 'button', 'Greet') })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/Unknown ref/), code: 'invalid_arguments' } });
    expect(await request('DELETE', `/tabs/${targetId}`)).toMatchObject({ status: 200, body: { ok: true } });
    expect(await request('DELETE', `/tabs/${targetId}`)).toMatchObject({ status: 404, body: { code: 'invalid_arguments' } });
    expect(await request('POST', '/stop')).toMatchObject({ status: 200, body: { ok: true, stopped: true } });
  });

  it('refuses bad requests with an error body: URLs it may not open, unknown routes, kinds and profiles, bad JSON', async () => {
    expect(await request('POST', '/tabs/open', { url: 'file:///etc/passwd' })).toMatchObject({ status: 400, body: { code: 'invalid_arguments' } });
    expect(await request('POST', '/navigate', { url: 'javascript:alert(1)' })).toMatchObject({ status: 400 });
    expect(await request('POST', '/tabs/open', {})).toMatchObject({ status: 400, body: { error: 'url is required' } });
    expect(await request('POST', '/act', { kind: 'evaluate', fn: '() => 1' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/not supported/) } });
    expect(await request('POST', '/act', [1, 2])).toMatchObject({ status: 400 });
    expect(await request('GET', '/snapshot?format=yaml')).toMatchObject({ status: 400 });
    expect(await request('POST', '/hooks/file-chooser', { element: '#f' })).toMatchObject({ status: 400, body: { error: 'paths are required' } });
    expect(await request('POST', '/hooks/file-chooser', { paths: ['/x'], ref: 'e1', element: '#f' })).toMatchObject({ status: 400, body: { error: 'ref cannot be combined with inputRef/element' } });
    expect(await request('GET', '/text?maxChars=-1')).toMatchObject({ status: 400 });
    expect(await request('GET', '/nope')).toMatchObject({ status: 404 });
    expect(await request('GET', '/tabs?profile=chrome')).toMatchObject({ status: 404, body: { error: 'profile "chrome" not found' } });
    expect(await request('GET', '/tabs?profile=openclaw')).toMatchObject({ status: 200 });
    expect(await request('DELETE', '/tabs/%E0%A4%A')).toMatchObject({ status: 400 });
    expect(await request('POST', '/navigate', '{not json')).toMatchObject({ status: 400, body: { error: 'the body is not valid JSON' } });
  });

  it('has the gates of a loopback service: token, Host, no web pages, JSON bodies, a body cap, three methods', async () => {
    const raw = async (method: string, headers: Record<string, string>, body?: string) => (await fetch(`${listener.url}/tabs`, { method, headers, ...(body === undefined ? {} : { body }) })).status;
    expect(await raw('GET', {})).toBe(401);
    expect(await raw('GET', { authorization: 'Bearer wrong' })).toBe(401);
    expect(await raw('GET', { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' })).toBe(403);
    expect(await raw('GET', { authorization: `Bearer ${TOKEN}`, origin: listener.url })).toBe(403);
    // fetch will not send another Host: node:http does.
    const rebound = await new Promise<number>((resolve, reject) => {
      const url = new URL(listener.url);
      httpRequest({ host: '127.0.0.1', port: url.port, path: '/tabs', headers: { host: `evil.example:${url.port}`, authorization: `Bearer ${TOKEN}` } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(rebound).toBe(403);
    expect(await raw('POST', { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, '{"url":"http://127.0.0.1/"}')).toBe(415);
    expect(await raw('PUT', { authorization: `Bearer ${TOKEN}` })).toBe(405);
    expect(await raw('POST', { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, JSON.stringify({ url: 'x'.repeat(1024 * 1024 + 1) }))).toBe(413);
    // An upload alone may carry a larger body (its files as base64), up to 24 MiB.
    const upload = async (bytes: number) => (await fetch(`${listener.url}/hooks/file-chooser`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ paths: ['x'.repeat(bytes)] }) })).status;
    expect(await upload(2 * 1024 * 1024)).toBe(400);
    expect(await upload(24 * 1024 * 1024 + 1)).toBe(413);
    expect(await raw('GET', { authorization: `Bearer ${TOKEN}` })).toBe(200);
    expect(existsSync(join(dir, 'profile'))).toBe(true);
  });
});
