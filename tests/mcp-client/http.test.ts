import { createMcpRuntime } from '@capnode/mcp-client/node';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { startFakeHttpServer, type FakeHttpServer } from './fixtures/httpServer.js';
import { grantAll, memoryLogger, textOf } from './helpers.js';
import { eventually } from '../support/poll.js';

let server: FakeHttpServer;
beforeEach(async () => {
  server = await startFakeHttpServer();
});
afterEach(async () => {
  await server.close();
});

const SECRET = 'Bearer very-secret-token-123';

const config = (extra: Record<string, unknown> = {}) =>
  grantAll([{ name: 'remote', url: server.url, headers: { Authorization: SECRET, 'X-Api-Key': 'key-abcdef-987' }, max_response_bytes: 50_000, ...extra }]);

test('configured headers go on every request and never into logs', async () => {
  const logger = memoryLogger();
  const runtime = await createMcpRuntime(config(), { agent: 'test', logger });
  expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected', transport: 'http' });
  expect(textOf(await runtime.call('remote__echo'))).toBe('echo ok');
  await runtime.close();
  const posts = server.requests.filter((r) => r.method === 'POST');
  expect(posts.length).toBeGreaterThanOrEqual(4);
  for (const request of server.requests) {
    expect(request.headers.authorization).toBe(SECRET);
    expect(request.headers['x-api-key']).toBe('key-abcdef-987');
  }
  expect(server.requests.some((r) => r.method === 'DELETE')).toBe(true);
  expect(logger.text()).not.toContain('very-secret-token-123');
  expect(logger.text()).not.toContain('key-abcdef-987');
});

test('max_response_bytes is enforced on raw bytes before parsing: JSON, event stream and declared length', async () => {
  await using runtime = await createMcpRuntime(config({ tool_timeout_secs: 60 }), { agent: 'test', logger: memoryLogger() });
  for (const tool of ['remote__big-json', 'remote__big-sse', 'remote__big-declared']) {
    const started = performance.now();
    const result = await runtime.call(tool, { bytes: 400_000 });
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/exceeded max_response_bytes \(50000 bytes\)/);
    expect(textOf(await runtime.call(tool, { bytes: 10_000 }))).toHaveLength(10_000);
  }
  expect(runtime.diagnostics()[0]!.state).toBe('connected');
});

test('an event stream whose event boundaries are split across reads is not mistaken for one oversized event', async () => {
  await using runtime = await createMcpRuntime(config(), { agent: 'test', logger: memoryLogger() });
  // Ten 10 kB events: 100 kB in all, twice max_response_bytes, each event well below it.
  expect(textOf(await runtime.call('remote__split-sse', { bytes: 10_000 }))).toBe('split ok');
});

test('a JSON response with a known id but an invalid shape fails that call at once', async () => {
  await using runtime = await createMcpRuntime(config({ tool_timeout_secs: 60 }), { agent: 'test', logger: memoryLogger() });
  const started = performance.now();
  const result = await runtime.call('remote__bad-shape');
  expect(performance.now() - started).toBeLessThan(20_000);
  expect(textOf(result)).toMatch(/invalid JSON-RPC response/);
  expect(textOf(await runtime.call('remote__echo'))).toBe('echo ok');
});

test('a slow-drip response ends at the tool timeout; close leaves no sockets open', async () => {
  const runtime = await createMcpRuntime(config({ tool_timeout_secs: 1 }), { agent: 'test', logger: memoryLogger() });
  const started = performance.now();
  const result = await runtime.call('remote__drip');
  expect(performance.now() - started).toBeLessThan(15_000);
  expect(textOf(result)).toMatch(/did not answer 'drip' within 1 s/);
  // The timed-out call's body is aborted at once, not at close.
  await eventually(() => server.openDrips === 0, { what: 'the dripping response to be aborted' });
  expect(runtime.diagnostics()[0]!.state).toBe('connected');
  await runtime.close();
  const deadline = Date.now() + 5_000;
  while ((await server.connections()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await server.connections()).toBe(0);
});

test('a session the server reports as expired is recycled; the failed call is not replayed', async () => {
  await using runtime = await createMcpRuntime(config(), { agent: 'test', logger: memoryLogger() });
  expect(server.initializeCount).toBe(1);
  const expired = await runtime.call('remote__expire');
  expect(expired.isError).toBe(true);
  expect(textOf(expired)).toMatch(/404|expired/i);
  expect(textOf(await runtime.call('remote__echo'))).toBe('echo ok');
  expect(server.initializeCount).toBe(2);
  expect(server.calls.filter((name) => name === 'expire')).toHaveLength(1);
});
