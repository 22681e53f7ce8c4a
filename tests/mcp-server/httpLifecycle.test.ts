import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHttpServer } from '@capnode/mcp-server/node';
import { createFixtureInvoker } from './fixtures/capabilities.mjs';
import { goodHeaders, postJson, rawRequest, startFixtureServer, TOKEN } from './helpers.js';
import { eventually } from '../support/poll.js';

const slowCall = (ms: number) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms, steps: 1 } } });

function handleCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const resource of process.getActiveResourcesInfo()) counts[resource] = (counts[resource] ?? 0) + 1;
  return counts;
}

describe('shutdown', () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  beforeEach(() => {
    rejections.length = 0;
    process.on('unhandledRejection', onRejection);
  });
  afterEach(() => {
    process.off('unhandledRejection', onRejection);
    expect(rejections).toEqual([]);
  });

  it('drains an in-flight request before closing', async () => {
    const ctx = await startFixtureServer({ drainTimeoutMs: 10_000 });
    const pending = postJson(ctx.server.url, slowCall(400));
    await eventually(() => ctx.fixture.probe.started === 1);
    const closed = ctx.server.close();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).result.content[0].text).toBe('slept 400 ms');
    await closed;
    expect(ctx.fixture.probe.aborted).toBe(0);
    await expect(postJson(ctx.server.url, { jsonrpc: '2.0', id: 2, method: 'ping' })).rejects.toThrow();
  });

  it('aborts calls still running after the drain timeout, answers them, and leaves no handle behind', async () => {
    const before = handleCounts();
    const ctx = await startFixtureServer({ drainTimeoutMs: 150 });
    const pending = postJson(ctx.server.url, slowCall(60_000)).then(
      (response) => response,
      (error: unknown) => error,
    );
    await eventually(() => ctx.fixture.probe.started === 1);
    const started = performance.now();
    await ctx.server.close();
    expect(performance.now() - started).toBeLessThan(5_000);
    const outcome = await pending;
    expect(outcome).not.toBeInstanceOf(Error);
    const body = JSON.parse((outcome as { body: string }).body);
    expect(body.result.isError).toBe(true);
    expect(body.result.content[0].text).toContain('cancelled');
    expect(ctx.fixture.probe.aborted).toBe(1);
    await eventually(() => {
      const after = handleCounts();
      return ['TCPServerWrap', 'TCPSocketWrap', 'Timeout'].every((kind) => (after[kind] ?? 0) <= (before[kind] ?? 0));
    });
  });

  it('closes idempotently, also through Symbol.asyncDispose and an abort signal', async () => {
    const ctx = await startFixtureServer();
    const first = ctx.server.close();
    const second = ctx.server.close();
    expect(second).toBe(first);
    await first;
    await ctx.server.close();
    await ctx.server[Symbol.asyncDispose]();

    {
      await using disposable = await startFixtureServer();
      expect((await postJson(disposable.server.url, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    }

    const controller = new AbortController();
    const { invoker } = createFixtureInvoker();
    const server = await startHttpServer({ invoker, port: 0, token: TOKEN, signal: controller.signal });
    controller.abort();
    await eventually(() => false, { timeoutMs: 200 }).catch(() => {});
    await expect(postJson(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow();
    await server.close();
  });
});

describe('startHttpServer options', () => {
  it('listens on 127.0.0.1:8765 by default semantics and reports its URL', async () => {
    await using ctx = await startFixtureServer();
    expect(ctx.server.url).toBe(`http://127.0.0.1:${ctx.server.port}/`);
    expect(ctx.logs.some((line) => line.includes('listening on'))).toBe(true);
  });

  it('refuses non-loopback hosts and a missing or empty token', async () => {
    const { invoker } = createFixtureInvoker();
    for (const host of ['0.0.0.0', '192.168.1.10', '::', 'example.com']) {
      await expect(startHttpServer({ invoker, host, port: 0, token: TOKEN })).rejects.toThrow(/loopback/);
    }
    await expect(startHttpServer({ invoker, port: 0, token: '' })).rejects.toThrow(/token/);
    await expect(startHttpServer({ invoker, port: 0, token: undefined as unknown as string })).rejects.toThrow(/token/);
  });

  it('swaps the bearer token of a running server (token rotation), refusing the old one', async () => {
    await using ctx = await startFixtureServer();
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    ctx.server.setToken('rotated-token');
    expect((await postJson(ctx.server.url, ping)).status).toBe(401);
    expect((await postJson(ctx.server.url, ping, { authorization: 'Bearer rotated-token' })).status).toBe(200);
    expect(() => ctx.server.setToken('')).toThrow(TypeError);
    await using open = await startFixtureServer({ token: { disabled: true } });
    expect(() => open.server.setToken('x')).toThrow(/disabled/);
  });

  it('rejects cleanly when the port is taken', async () => {
    await using ctx = await startFixtureServer();
    const { invoker } = createFixtureInvoker();
    await expect(startHttpServer({ invoker, port: ctx.server.port, token: TOKEN })).rejects.toThrow(/EADDRINUSE/);
  });

  it('serves /_capnode/* through the admin handler with the admin token only, and hides handler failures behind a 500', async () => {
    await using ctx = await startFixtureServer({
      admin: {
        token: 'admin-token',
        handle: async (request) => {
          const path = new URL(request.url).pathname;
          if (path === '/_capnode/boom') throw new Error('SECRET admin failure');
          const body = request.method === 'POST' ? await request.text() : '';
          return Response.json({ path, method: request.method, body });
        },
      },
    });
    const { url } = ctx.server;
    const host = new URL(url).host;
    const ok = await rawRequest(url, { path: '/_capnode/approvals', headers: { host, authorization: 'Bearer admin-token' } });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ path: '/_capnode/approvals', method: 'GET', body: '' });
    const posted = await rawRequest(url, {
      method: 'POST',
      path: '/_capnode/approvals/1',
      headers: { host, authorization: 'Bearer admin-token', 'content-type': 'application/json' },
      body: '{"decision":"allow-once"}',
    });
    expect(JSON.parse(posted.body).body).toBe('{"decision":"allow-once"}');
    const mcpToken = await rawRequest(url, { path: '/_capnode/approvals', headers: goodHeaders(url) });
    expect(mcpToken.status).toBe(401);
    const browser = await rawRequest(url, { path: '/_capnode/approvals', headers: { host, authorization: 'Bearer admin-token', origin: 'http://evil' } });
    expect(browser.status).toBe(403);
    const adminOnMcp = await postJson(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: 'Bearer admin-token' });
    expect(adminOnMcp.status).toBe(401);
    const boom = await rawRequest(url, { path: '/_capnode/boom', headers: { host, authorization: 'Bearer admin-token' } });
    expect(boom.status).toBe(500);
    expect(boom.body).not.toContain('SECRET');
    expect(ctx.logs.some((line) => line.includes('SECRET admin failure'))).toBe(true);
  });
});
