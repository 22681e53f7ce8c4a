import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { activeHandles, expectNoHandlesLeft, fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';

/** Starts one fixture server with a long connect timeout and returns its diagnostic and how long startup took. */
async function startOne(mode: string) {
  const baseline = activeHandles();
  const started = performance.now();
  const runtime = await createMcpRuntime(grantAll([fixtureServer('fx', mode, { connect_timeout_secs: 60 })]), { agent: 'test', logger: memoryLogger() });
  const ms = performance.now() - started;
  const diagnostic = runtime.diagnostics()[0]!;
  await runtime.close();
  await expectNoHandlesLeft(baseline);
  return { diagnostic, ms };
}

describe('start-up failures report their real cause at once', () => {
  test("the server's initialize error", async () => {
    const { diagnostic, ms } = await startOne('init-error');
    expect(diagnostic.state).toBe('failed');
    expect(diagnostic.error).toContain('this server needs a license key (LICENSE_KEY unset)');
    expect(diagnostic.error).not.toMatch(/server process exited/);
    expect(ms).toBeLessThan(30_000);
  });

  test('an unsupported protocol version, with the supported list', async () => {
    const { diagnostic, ms } = await startOne('bad-version');
    expect(diagnostic.state).toBe('failed');
    expect(diagnostic.error).toMatch(/protocol version is not supported: 1999-01-01/);
    expect(diagnostic.error).toMatch(/supported versions: .*2025-03-26/);
    expect(diagnostic.error).not.toMatch(/server process exited/);
    expect(ms).toBeLessThan(30_000);
  });

  test('a malformed initialize result', async () => {
    const { diagnostic, ms } = await startOne('bad-init');
    expect(diagnostic.state).toBe('failed');
    expect(diagnostic.error).not.toMatch(/server process exited|within 60 s/);
    expect(diagnostic.error).toBe('Invalid result for initialize: capabilities: Invalid input: expected object, received string; serverInfo: Invalid input: expected object, received undefined');
    expect(ms).toBeLessThan(30_000);
  });

  test('a response with a known id but an invalid shape fails that call at once; the session survives', async () => {
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'ok', { tool_timeout_secs: 60 })]), { agent: 'test', logger: memoryLogger() });
    const started = performance.now();
    const result = await runtime.call('fx__bad-shape');
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/invalid JSON-RPC response/);
    expect(textOf(await runtime.call('fx__echo', { text: 'still fine' }))).toBe('still fine');
  });
});
