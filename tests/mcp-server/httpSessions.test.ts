import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Client as ClientV2, SSEClientTransport as SseTransportV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseTransportV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { lateCapability } from './fixtures/capabilities.mjs';
import { goodHeaders, postJson, rawRequest, registerUntilListChanged, startFixtureServer, TOKEN } from './helpers.js';
import { eventually } from '../support/poll.js';

const requestInit = { headers: { Authorization: `Bearer ${TOKEN}` } };
const SSE_ACCEPT = 'application/json, text/event-stream';

function initialize(id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
}

/** Opens a session with raw HTTP; returns its id. */
async function openSession(url: string): Promise<string> {
  const response = await postJson(url, initialize(), { accept: SSE_ACCEPT });
  expect(response.status).toBe(200);
  const id = response.headers['mcp-session-id'];
  expect(typeof id).toBe('string');
  const initialized = await postJson(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { accept: SSE_ACCEPT, 'mcp-session-id': id as string });
  expect(initialized.status).toBe(202);
  return id as string;
}

/** An open GET event stream: its status, the text read so far, and a way to drop it. */
interface OpenStream {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  text(): string;
  readonly ended: Promise<void>;
  destroy(): void;
}

function openStream(url: string, path: string, headers: Record<string, string>): Promise<OpenStream> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const req: ClientRequest = httpRequest(
      { host: target.hostname, port: target.port, path, method: 'GET', headers: { accept: 'text/event-stream', ...goodHeaders(url), ...headers }, agent: false },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        const ended = new Promise<void>((done) => {
          res.on('close', done);
          res.on('end', done);
        });
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: () => text, ended, destroy: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('Streamable HTTP sessions (initialize era)', () => {
  it('gives an SDK v2 client a session whose stream carries tools/list_changed', async () => {
    await using ctx = await startFixtureServer();
    let changes = 0;
    const client = new ClientV2(
      { name: 'session-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' }, listChanged: { tools: { onChanged: () => void (changes += 1) } } },
    );
    const transport = new HttpTransportV2(new URL(ctx.server.url), { requestInit });
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      expect(ctx.server.sessions).toBe(1);
      // The standalone GET stream holds no concurrency slot.
      await eventually(() => ctx.server.inFlight === 0, { what: 'no slot held by the open stream' });
      // The client opens its GET stream in the background after initialized, and debounces changes.
      await registerUntilListChanged(ctx.fixture.registry, () => changes, 'tools/list_changed on the session stream');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late.hello');
    } finally {
      await client.close();
    }
  });

  it('gives an SDK v1 client a session whose stream carries tools/list_changed', async () => {
    await using ctx = await startFixtureServer();
    let changes = 0;
    const client = new ClientV1({ name: 'session-v1', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (changes += 1));
    const transport = new HttpTransportV1(new URL(ctx.server.url), { requestInit });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      // The v1 client opens its GET stream in the background after initialized.
      await eventually(async () => {
        const remove = ctx.fixture.registry.register(lateCapability);
        remove();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return changes > 0;
      }, { what: 'tools/list_changed on the v1 session stream' });
      const remove = ctx.fixture.registry.register(lateCapability);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late.hello');
      remove();
      const result = await client.callTool({ name: 'fixture.whoami', arguments: {} });
      expect(result.structuredContent).toMatchObject({ transport: 'mcp-http', caller: 'session-v1' });
      // DELETE on close ends the session on the server.
      await transport.terminateSession();
      expect(ctx.server.sessions).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('keeps JSON-only and sessionless clients sessionless', async () => {
    await using ctx = await startFixtureServer();
    const jsonOnly = await postJson(ctx.server.url, initialize());
    expect(jsonOnly.status).toBe(200);
    expect(jsonOnly.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(jsonOnly.body).result.capabilities.tools).toEqual({ listChanged: false });
    const call = await postJson(ctx.server.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fixture.echo', arguments: { text: 'x' } } }, {
      'mcp-protocol-version': '2025-11-25',
    });
    expect(JSON.parse(call.body).result.structuredContent).toEqual({ text: 'x' });
    expect(ctx.server.sessions).toBe(0);
    // A client that got a session id but omits it is still served sessionless.
    await openSession(ctx.server.url);
    const again = await postJson(ctx.server.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect(JSON.parse(again.body).result.tools.length).toBeGreaterThan(0);
  });

  it('serves sessionless only with maxSessions: 0, and refuses bad session options', async () => {
    await using ctx = await startFixtureServer({ maxSessions: 0 });
    const init = await postJson(ctx.server.url, initialize(), { accept: SSE_ACCEPT });
    expect(init.headers['mcp-session-id']).toBeUndefined();
    expect((await rawRequest(ctx.server.url, { path: '/sse', headers: goodHeaders(ctx.server.url, { accept: 'text/event-stream' }) })).status).toBe(405);
    for (const options of [{ maxSessions: -1 }, { maxSessions: 1.5 }, { sessionIdleTimeoutMs: 0 }, { sessionIdleTimeoutMs: Number.NaN }]) {
      await expect(startFixtureServer(options), JSON.stringify(options)).rejects.toThrow(RangeError);
    }
  });

  it('answers 404 for an unknown session id on POST, GET and DELETE', async () => {
    await using ctx = await startFixtureServer();
    const url = ctx.server.url;
    const headers = { 'mcp-session-id': 'no-such-session' };
    const post = await postJson(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: SSE_ACCEPT, ...headers });
    expect(post.status).toBe(404);
    expect(JSON.parse(post.body).error.code).toBe(-32001);
    expect((await rawRequest(url, { headers: goodHeaders(url, { accept: 'text/event-stream', ...headers }) })).status).toBe(404);
    expect((await rawRequest(url, { method: 'DELETE', headers: goodHeaders(url, headers) })).status).toBe(404);
    expect((await postJson(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { accept: SSE_ACCEPT, ...headers }, '/message?sessionId=nope')).status).toBe(404);
  });

  it('ends a session with DELETE; its id then answers 404', async () => {
    await using ctx = await startFixtureServer();
    const url = ctx.server.url;
    const id = await openSession(url);
    expect(ctx.server.sessions).toBe(1);
    const stream = await openStream(url, '/', { 'mcp-session-id': id });
    expect(stream.status).toBe(200);
    const deleted = await rawRequest(url, { method: 'DELETE', headers: goodHeaders(url, { 'mcp-session-id': id }) });
    expect(deleted.status).toBe(200);
    await stream.ended;
    expect(ctx.server.sessions).toBe(0);
    expect((await postJson(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { accept: SSE_ACCEPT, 'mcp-session-id': id })).status).toBe(404);
  });

  it('bounds the number of sessions: the longest idle is evicted, and with none idle a new one gets 503', async () => {
    await using ctx = await startFixtureServer({ maxSessions: 2 });
    const url = ctx.server.url;
    const first = await openSession(url);
    const second = await openSession(url);
    const third = await openSession(url);
    expect(ctx.server.sessions).toBe(2);
    const ping = (id: string) => postJson(url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { accept: SSE_ACCEPT, 'mcp-session-id': id });
    expect((await ping(first)).status).toBe(404);
    expect((await ping(second)).status).toBe(200);
    expect((await ping(third)).status).toBe(200);
    // Both remaining sessions have an open stream: neither is idle, so a new one is refused.
    const streams = [await openStream(url, '/', { 'mcp-session-id': second }), await openStream(url, '/', { 'mcp-session-id': third })];
    const refused = await postJson(url, initialize(), { accept: SSE_ACCEPT });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body).error.message).toContain('Too many sessions');
    expect((await ping(second)).status).toBe(200);
    for (const stream of streams) stream.destroy();
    await eventually(async () => (await postJson(url, initialize(), { accept: SSE_ACCEPT })).status === 200, { what: 'room once a stream closed' });
  });

  it('expires an idle session, but not one whose stream is open', async () => {
    await using ctx = await startFixtureServer({ sessionIdleTimeoutMs: 150 });
    const url = ctx.server.url;
    const idle = await openSession(url);
    const watched = await openSession(url);
    const stream = await openStream(url, '/', { 'mcp-session-id': watched });
    await eventually(() => ctx.server.sessions === 1, { what: 'the idle session to expire' });
    expect((await postJson(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { accept: SSE_ACCEPT, 'mcp-session-id': idle })).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await postJson(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { accept: SSE_ACCEPT, 'mcp-session-id': watched })).status).toBe(200);
    stream.destroy();
    await eventually(() => ctx.server.sessions === 0, { what: 'the session to expire once its stream closed' });
  });

  it('applies the request deadline and disconnects to session calls', async () => {
    await using ctx = await startFixtureServer({ requestTimeoutMs: 300 });
    const client = new ClientV2({ name: 'deadline', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new HttpTransportV2(new URL(ctx.server.url), { requestInit }));
    try {
      const before = ctx.fixture.probe.aborted;
      await expect(client.callTool({ name: 'fixture.slow', arguments: { ms: 30_000, steps: 2 } }, { timeout: 2000 })).rejects.toThrow();
      await eventually(() => ctx.fixture.probe.aborted === before + 1, { what: 'the capability aborted at the deadline' });
      await eventually(() => ctx.server.inFlight === 0);
      // The session survives its request's deadline.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('close() ends every session and stream', async () => {
    const ctx = await startFixtureServer();
    const url = ctx.server.url;
    const id = await openSession(url);
    const stream = await openStream(url, '/', { 'mcp-session-id': id });
    const legacy = await openStream(url, '/sse', {});
    expect(ctx.server.sessions).toBe(2);
    const started = performance.now();
    await ctx.server.close();
    await Promise.all([stream.ended, legacy.ended]);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(ctx.server.sessions).toBe(0);
  });
});

describe('legacy HTTP+SSE transport (2024-11-05)', () => {
  it('serves the SDK v1 SSEClientTransport: list, call, list_changed', async () => {
    await using ctx = await startFixtureServer();
    let changes = 0;
    const client = new ClientV1({ name: 'legacy-v1', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (changes += 1));
    await client.connect(new SseTransportV1(new URL('sse', ctx.server.url), { requestInit }));
    try {
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('fixture.echo');
      const echoed = await client.callTool({ name: 'fixture.echo', arguments: { text: 'legacy' } });
      expect(echoed.structuredContent).toEqual({ text: 'legacy' });
      const whoami = await client.callTool({ name: 'fixture.whoami', arguments: {} });
      expect(whoami.structuredContent).toMatchObject({ transport: 'mcp-http', caller: 'legacy-v1' });
      const progress: unknown[] = [];
      const slow = await client.callTool({ name: 'fixture.slow', arguments: { ms: 60, steps: 2 } }, undefined, { onprogress: (update) => progress.push(update) });
      expect(slow.content).toEqual([{ type: 'text', text: 'slept 60 ms' }]);
      expect(progress).toHaveLength(2);
      const remove = ctx.fixture.registry.register(lateCapability);
      await eventually(() => changes > 0, { what: 'tools/list_changed on the legacy stream' });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late.hello');
      remove();
      expect(ctx.server.sessions).toBe(1);
      await eventually(() => ctx.server.inFlight === 0, { what: 'no slot held by the legacy stream' });
    } finally {
      await client.close();
    }
    await eventually(() => ctx.server.sessions === 0, { what: 'the legacy session to end with its stream' });
  });

  it('serves the SDK v2 SSEClientTransport too, and cancels through it', async () => {
    await using ctx = await startFixtureServer();
    const client = new ClientV2({ name: 'legacy-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new SseTransportV2(new URL('sse', ctx.server.url), { requestInit }));
    try {
      expect((await client.callTool({ name: 'fixture.echo', arguments: { text: 'v2' } })).structuredContent).toEqual({ text: 'v2' });
      const before = ctx.fixture.probe.aborted;
      const started = ctx.fixture.probe.started;
      const controller = new AbortController();
      const pending = client.callTool({ name: 'fixture.slow', arguments: { ms: 30_000, steps: 2 } }, { signal: controller.signal });
      await eventually(() => ctx.fixture.probe.started === started + 1);
      controller.abort('test cancels');
      await expect(pending).rejects.toThrow();
      await eventually(() => ctx.fixture.probe.aborted === before + 1, { what: 'the capability aborted' });
      await eventually(() => ctx.server.inFlight === 0, { what: 'the held POST released' });
    } finally {
      await client.close();
    }
  });

  it('answers the message POST of a request 202 once its response was handed to the stream', async () => {
    await using ctx = await startFixtureServer();
    const url = ctx.server.url;
    const stream = await openStream(url, '/sse', {});
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    const endpoint = (await eventually(() => /event: endpoint\ndata: (\S+)\n\n/.exec(stream.text())))[1] as string;
    expect(endpoint).toMatch(/^\/message\?sessionId=[A-Za-z0-9_-]{43}$/);
    const answer = await postJson(url, initialize(7), {}, endpoint);
    expect(answer.status).toBe(202);
    await eventually(() => stream.text().includes('"id":7'), { what: 'the initialize result on the stream' });
    const bad = await postJson(url, { hello: 'world' }, {}, endpoint);
    expect(bad.status).toBe(400);
    const batch = await postJson(url, [{ jsonrpc: '2.0', id: 8, method: 'ping' }], {}, endpoint);
    expect(batch.status).toBe(400);
    stream.destroy();
    await eventually(() => ctx.server.sessions === 0);
    expect((await postJson(url, { jsonrpc: '2.0', id: 9, method: 'ping' }, {}, endpoint)).status).toBe(404);
  });
});

/** The JSON-RPC messages of the `message` events in an SSE text. */
function messagesOf(text: string): Array<{ id?: unknown; result?: unknown }> {
  return [...text.matchAll(/event: message\ndata: (.*)\n\n/g)].map((match) => JSON.parse(match[1] as string));
}

describe('legacy HTTP+SSE limits', () => {
  it('applies the request deadline to a held message POST: 408, the capability aborted, the session kept', async () => {
    await using ctx = await startFixtureServer({ requestTimeoutMs: 300 });
    const url = ctx.server.url;
    const stream = await openStream(url, '/sse', {});
    const endpoint = (await eventually(() => /event: endpoint\ndata: (\S+)\n\n/.exec(stream.text())))[1] as string;
    expect((await postJson(url, initialize(1), {}, endpoint)).status).toBe(202);
    const before = ctx.fixture.probe.aborted;
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms: 30_000, steps: 2 } } };
    const late = await postJson(url, call, {}, endpoint);
    expect(late.status).toBe(408);
    await eventually(() => ctx.fixture.probe.aborted === before + 1, { what: 'the capability aborted at the deadline' });
    const answer = await eventually(() => messagesOf(stream.text()).find((message) => message.id === 2), { what: 'the cancelled result on the stream' });
    expect(answer.result).toMatchObject({ isError: true });
    expect((await postJson(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, {}, endpoint)).status).toBe(202);
    await eventually(() => ctx.server.inFlight === 0);
    stream.destroy();
  });
});

describe('every gate applies to the session and SSE routes', () => {
  it('refuses a missing token, a browser, a foreign Host, a wrong Content-Type and an oversized body', async () => {
    await using ctx = await startFixtureServer({ maxBodyBytes: 1024 });
    const url = ctx.server.url;
    const id = await openSession(url);
    const legacy = await openStream(url, '/sse', {});
    const endpoint = (await eventually(() => /event: endpoint\ndata: (\S+)\n\n/.exec(legacy.text())))[1] as string;
    const host = new URL(url).host;
    const routes: Array<{ what: string; method: string; path: string; headers: Record<string, string>; body?: string }> = [
      { what: 'session POST', method: 'POST', path: '/', headers: { 'content-type': 'application/json', accept: SSE_ACCEPT, 'mcp-session-id': id }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' },
      { what: 'session GET stream', method: 'GET', path: '/', headers: { accept: 'text/event-stream', 'mcp-session-id': id } },
      { what: 'session DELETE', method: 'DELETE', path: '/', headers: { 'mcp-session-id': id } },
      { what: 'initialize', method: 'POST', path: '/', headers: { 'content-type': 'application/json', accept: SSE_ACCEPT }, body: JSON.stringify(initialize()) },
      { what: 'legacy GET /sse', method: 'GET', path: '/sse', headers: { accept: 'text/event-stream' } },
      { what: 'legacy message POST', method: 'POST', path: endpoint, headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' },
    ];
    for (const route of routes) {
      const send = (headers: OutgoingHttpHeaders, body = route.body) =>
        rawRequest(url, { method: route.method, path: route.path, headers, ...(body === undefined ? {} : { body }), timeoutMs: 5000 });
      expect((await send({ host, ...route.headers })).status, `${route.what}: no token`).toBe(401);
      expect((await send({ host, authorization: 'Bearer wrong', ...route.headers })).status, `${route.what}: wrong token`).toBe(401);
      expect((await send({ ...goodHeaders(url), origin: 'https://evil.example', ...route.headers })).status, `${route.what}: Origin`).toBe(403);
      expect((await send({ ...goodHeaders(url), 'sec-fetch-site': 'cross-site', ...route.headers })).status, `${route.what}: fetch metadata`).toBe(403);
      expect((await send({ ...goodHeaders(url), ...route.headers, host: 'evil.example' })).status, `${route.what}: Host`).toBe(403);
      if (route.method === 'POST') {
        expect((await send({ ...goodHeaders(url), ...route.headers, 'content-type': 'text/plain' })).status, `${route.what}: Content-Type`).toBe(415);
        expect((await send({ ...goodHeaders(url), ...route.headers }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2048) } }))).status, `${route.what}: body size`).toBe(413);
      }
    }
    // The refused attempts changed nothing: the session still answers, and no new one was made.
    expect(ctx.server.sessions).toBe(2);
    const ping = await postJson(url, { jsonrpc: '2.0', id: 5, method: 'ping' }, { accept: SSE_ACCEPT, 'mcp-session-id': id });
    expect(ping.status).toBe(200);
    legacy.destroy();
  });

  it('keeps the concurrency cap for session requests while streams hold no slot', async () => {
    await using ctx = await startFixtureServer({ maxConcurrency: 1 });
    const url = ctx.server.url;
    const id = await openSession(url);
    const stream = await openStream(url, '/', { 'mcp-session-id': id });
    const legacy = await openStream(url, '/sse', {});
    expect(stream.status).toBe(200);
    expect(legacy.status).toBe(200);
    await eventually(() => ctx.server.inFlight === 0);
    const slow = postJson(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms: 600, steps: 1 } } }, { accept: SSE_ACCEPT, 'mcp-session-id': id });
    await eventually(() => ctx.server.inFlight === 1);
    const busy = await postJson(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { accept: SSE_ACCEPT, 'mcp-session-id': id });
    expect(busy.status).toBe(503);
    expect((await slow).status).toBe(200);
    stream.destroy();
    legacy.destroy();
  });
});

describe('shutdown with sessions open', () => {
  it('lets the process exit by itself after close() with a session stream and a legacy stream open', async () => {
    const { spawn } = await import('node:child_process');
    const script = new URL('./fixtures/sessionsExit.mjs', import.meta.url);
    const child = spawn(process.execPath, [script.pathname], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout.trim())).toEqual({ sessions: 2, after: 0 });
  }, 20_000);
});
