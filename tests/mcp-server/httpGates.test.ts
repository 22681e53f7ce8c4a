import { beforeAll, describe, expect, it } from 'vitest';
import { accessControlHeaders, goodHeaders, postJson, rawRequest, startFixtureServer, TOKEN, useSuiteFixtureServer } from './helpers.js';
import { eventually } from '../support/poll.js';

const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

describe('HTTP gates, in order', () => {
  const suite = useSuiteFixtureServer({ maxBodyBytes: 1024 });
  let url: string;
  let host: string;

  beforeAll(() => {
    url = suite.url;
    host = new URL(url).host;
  });

  it('serves a valid POST with 200 and plain JSON', async () => {
    const response = await postJson(url, PING);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect(JSON.parse(response.body)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(accessControlHeaders(response.headers)).toEqual([]);
  });

  it('answers GET / with a 200 text probe once authenticated', async () => {
    const response = await rawRequest(url, { headers: goodHeaders(url) });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.body).toMatch(/capnode MCP server/);
  });

  it.each([
    ['Origin', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    ['Sec-Fetch-Site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Mode navigate', { 'sec-fetch-mode': 'navigate' }],
    ['Sec-Fetch-Mode no-cors', { 'sec-fetch-mode': 'no-cors' }],
    ['Sec-Fetch-Dest', { 'sec-fetch-dest': 'empty' }],
    ['Referer', { referer: 'https://evil.example/page' }],
  ])('refuses a browser-marked request (%s) with 403 even with a valid token', async (_name, extra) => {
    const response = await postJson(url, PING, extra);
    expect(response.status).toBe(403);
    expect(accessControlHeaders(response.headers)).toEqual([]);
  });

  it('lets a lone Sec-Fetch-Mode: cors through (what Node fetch sends; browsers add Sec-Fetch-Site)', async () => {
    const response = await postJson(url, PING, { 'sec-fetch-mode': 'cors' });
    expect(response.status).toBe(200);
  });

  it('refuses a CORS preflight with 403 and no Access-Control-* header', async () => {
    const response = await rawRequest(url, {
      method: 'OPTIONS',
      headers: { host, origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(response.status).toBe(403);
    expect(accessControlHeaders(response.headers)).toEqual([]);
  });

  it.each([['evil.example'], ['127.0.0.1.evil.example'], ['127.0.0.2'], ['localhost.evil:80'], ['[::2]:80']])(
    'refuses Host %s with 403 (DNS rebinding)',
    async (badHost) => {
      const response = await postJson(url, PING, { host: badHost });
      expect(response.status).toBe(403);
    },
  );

  it('refuses a request without a Host header with 403', async () => {
    const response = await rawRequest(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: PING });
    expect(response.status).toBe(403);
  });

  it.each([['127.0.0.1'], ['localhost'], ['LOCALHOST'], ['[::1]'], ['localhost:1'], ['[::1]:65535']])('accepts Host %s (any port)', async (okHost) => {
    const response = await postJson(url, PING, { host: okHost });
    expect(response.status).toBe(200);
  });

  it('answers 401 with a line saying what to send for a missing, wrong or non-bearer credential', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`, 'Bearer', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`]) {
      const headers: Record<string, string> = { host, 'content-type': 'application/json' };
      if (authorization !== undefined) headers.authorization = authorization;
      const response = await rawRequest(url, { method: 'POST', headers, body: PING });
      expect(response.status, String(authorization)).toBe(401);
      expect(response.body).toMatch(/^Unauthorized: .*Authorization: Bearer <token>/);
      expect(accessControlHeaders(response.headers)).toEqual([]);
    }
  });

  it('matches the bearer scheme case-insensitively', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      const response = await postJson(url, PING, { authorization: `${scheme} ${TOKEN}` });
      expect(response.status).toBe(200);
    }
  });

  it('checks the token before any method dispatch (GET, PUT, bad Content-Type, oversized body all get 401)', async () => {
    const noAuth = { host };
    expect((await rawRequest(url, { headers: noAuth })).status).toBe(401);
    expect((await rawRequest(url, { method: 'PUT', headers: noAuth, body: 'x' })).status).toBe(401);
    expect((await rawRequest(url, { method: 'POST', headers: { ...noAuth, 'content-type': 'text/plain' }, body: PING })).status).toBe(401);
    expect((await rawRequest(url, { method: 'POST', headers: { ...noAuth, 'content-type': 'application/json' }, body: 'x'.repeat(4096) })).status).toBe(401);
  });

  it('refuses verbs other than GET/POST/DELETE with 405', async () => {
    for (const method of ['PUT', 'PATCH', 'HEAD', 'OPTIONS']) {
      const response = await rawRequest(url, { method, headers: goodHeaders(url) });
      expect(response.status, method).toBe(405);
    }
  });

  it('answers DELETE and an SSE GET without a session id with 405', async () => {
    expect((await rawRequest(url, { method: 'DELETE', headers: goodHeaders(url) })).status).toBe(405);
    const sse = await rawRequest(url, { headers: goodHeaders(url, { accept: 'text/event-stream' }) });
    expect(sse.status).toBe(405);
  });

  it('refuses a Content-Type other than application/json with 415, parameters allowed', async () => {
    const plain = await rawRequest(url, { method: 'POST', headers: goodHeaders(url, { 'content-type': 'text/plain' }), body: PING });
    expect(plain.status).toBe(415);
    const missing = await rawRequest(url, { method: 'POST', headers: goodHeaders(url), body: PING });
    expect(missing.status).toBe(415);
    const charset = await postJson(url, PING, { 'content-type': 'application/json; charset=utf-8' });
    expect(charset.status).toBe(200);
  });

  it('refuses a body over the limit with 413, on Content-Length and while reading a chunked body', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2048) } });
    const declared = await postJson(url, big);
    expect(declared.status).toBe(413);
    const chunked = await rawRequest(url, {
      method: 'POST',
      headers: goodHeaders(url, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }),
      drip: { chunks: [big.slice(0, 600), big.slice(600, 1200), big.slice(1200)], intervalMs: 5 },
    });
    expect(chunked.status).toBe(413);
  });

  it('answers a notification-only POST with 202 and no body', async () => {
    const response = await postJson(url, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(response.status).toBe(202);
    expect(response.body).toBe('');
  });

  it('answers garbage with a JSON-RPC parse error and a non-object root with invalid request', async () => {
    const garbage = await postJson(url, '{not json');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body).error.code).toBe(-32700);
    const empty = await postJson(url, '');
    expect(JSON.parse(empty.body).error.code).toBe(-32700);
    for (const root of ['5', '"text"', 'null', 'true']) {
      const response = await postJson(url, root);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body).error.code).toBe(-32600);
    }
  });
});

describe('HTTP gates with a full house', () => {
  it('answers 503 with Retry-After once every slot is taken, before the Origin and token gates', async () => {
    await using ctx = await startFixtureServer({ maxConcurrency: 1 });
    const { server, fixture } = ctx;
    const slow = postJson(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms: 2500, steps: 1 } } });
    await eventually(() => fixture.probe.started === 1);
    expect(server.inFlight).toBe(1);
    const busy = await postJson(server.url, PING);
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    const busyBrowser = await postJson(server.url, PING, { origin: 'https://evil.example' });
    expect(busyBrowser.status).toBe(503);
    const busyNoToken = await rawRequest(server.url, { method: 'POST', headers: { host: new URL(server.url).host }, body: PING });
    expect(busyNoToken.status).toBe(503);
    expect((await slow).status).toBe(200);
    await eventually(() => server.inFlight === 0);
    expect((await postJson(server.url, PING)).status).toBe(200);
  });

  it('lets a request that finds the cap full wait briefly for a slot instead of failing at once', async () => {
    await using ctx = await startFixtureServer({ maxConcurrency: 1 });
    const results = await Promise.all(Array.from({ length: 4 }, () => postJson(ctx.server.url, PING)));
    for (const result of results) expect([200, 503]).toContain(result.status);
    expect(results.some((result) => result.status === 200)).toBe(true);
  });
});

describe('HTTP request deadline', () => {
  it('answers a slow-drip body with 408 and frees the slot', async () => {
    await using ctx = await startFixtureServer({ maxConcurrency: 1, requestTimeoutMs: 400 });
    const { server } = ctx;
    const drip = await rawRequest(server.url, {
      method: 'POST',
      headers: goodHeaders(server.url, { 'content-type': 'application/json', 'content-length': '1000' }),
      drip: { chunks: ['{"jsonrpc":', '"2.0",', '"id":1,'], intervalMs: 150, endBody: false },
    });
    expect(drip.status).toBe(408);
    expect(drip.headers.connection).toBe('close');
    await eventually(() => server.inFlight === 0);
    expect((await postJson(server.url, PING)).status).toBe(200);
  });

  it('answers a dispatch past the deadline with 408 and aborts the capability', async () => {
    await using ctx = await startFixtureServer({ requestTimeoutMs: 400 });
    const { server, fixture } = ctx;
    const response = await postJson(server.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms: 10_000, steps: 2 } } });
    expect(response.status).toBe(408);
    await eventually(() => fixture.probe.aborted === 1);
    await eventually(() => server.inFlight === 0);
  });

  it('aborts a 2026-07-28 per-request call past the deadline too, and keeps serving that form', async () => {
    await using ctx = await startFixtureServer({ requestTimeoutMs: 400 });
    const { server, fixture } = ctx;
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const call = (id: number, name: string, args: unknown) =>
      postJson(
        server.url,
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
      );
    expect((await call(10, 'fixture.slow', { ms: 10_000, steps: 2 })).status).toBe(408);
    await eventually(() => fixture.probe.aborted === 1);
    await eventually(() => server.inFlight === 0);
    const again = await call(11, 'fixture.whoami', {});
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body).result.structuredContent.requestId).toBe('11');
  });
});

describe('authentication switched off explicitly', () => {
  it('serves without a token only with token: { disabled: true }', async () => {
    await using ctx = await startFixtureServer({ token: { disabled: true } });
    const response = await rawRequest(ctx.server.url, { method: 'POST', headers: { host: new URL(ctx.server.url).host, 'content-type': 'application/json' }, body: PING });
    expect(response.status).toBe(200);
    const browser = await rawRequest(ctx.server.url, { method: 'POST', headers: { host: new URL(ctx.server.url).host, origin: 'http://x', 'content-type': 'application/json' }, body: PING });
    expect(browser.status).toBe(403);
  });
});
