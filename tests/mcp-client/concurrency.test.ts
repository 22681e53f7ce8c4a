import { validateMcpConfig } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { fixtureServer, grantAll, memoryLogger, readLog, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';

/** Runs the calls at once and returns their texts in the order they finished. */
async function finishOrder(calls: Array<[string, () => Promise<{ content: readonly { text: string }[] }>]>): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(calls.map(async ([label, run]) => (await run(), order.push(label))));
  return order;
}

describe('per-server concurrency cap and parallel-calls flag', () => {
  test('parallel_calls = false serializes calls to that server in arrival order; other servers are not held', async () => {
    const config = grantAll([fixtureServer('serial', 'ok', { parallel_calls: false }), fixtureServer('free')]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
    const tools = await runtime.tools();
    expect(tools['serial__echo']!.parallelCalls).toBe(false);
    expect(tools['free__echo']!.parallelCalls).toBe(true);
    const order = await finishOrder([
      ['serial slow', () => runtime.call('serial__slow', { ms: 800 })],
      ['serial echo', () => runtime.call('serial__echo', { text: 'x' })],
      ['free echo', () => runtime.call('free__echo', { text: 'y' })],
    ]);
    expect(order).toEqual(['free echo', 'serial slow', 'serial echo']);
    // Without the flag the fast call overtakes the slow one.
    expect(await finishOrder([
      ['free slow', () => runtime.call('free__slow', { ms: 800 })],
      ['free echo', () => runtime.call('free__echo', { text: 'z' })],
    ])).toEqual(['free echo', 'free slow']);
  });

  test('max_concurrent_calls caps calls in flight; a call aborted while it waits leaves the queue and never runs', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('capped', 'ok', { max_concurrent_calls: 2, env: { FIXTURE_LOG: log } })]), { agent: 'test', logger: memoryLogger() });
    const controller = new AbortController();
    const first = runtime.call('capped__slow', { ms: 1_500 });
    const second = runtime.call('capped__slow', { ms: 1_500 });
    const waiting = runtime.call('capped__hang', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const aborted = await waiting;
    expect(aborted.isError).toBe(true);
    expect(textOf(aborted)).toMatch(/cancelled/);
    const third = runtime.call('capped__echo', { text: 'after' });
    expect((await Promise.all([first, second, third])).map(textOf)).toEqual(['slow done', 'slow done', 'after']);
    expect(readLog(log).filter((line) => line.startsWith('hang '))).toEqual([]);
  });

  test('the fields are validated', () => {
    const issues = (server: Record<string, unknown>) => {
      const result = validateMcpConfig({ servers: [{ name: 's', command: 'node', ...server }] });
      return result.ok ? [] : result.issues.map((issue) => `${issue.path}: ${issue.message}`);
    };
    expect(issues({ max_concurrent_calls: 0 })).toEqual(['servers[0].max_concurrent_calls: must be at least 1']);
    expect(issues({ max_concurrent_calls: 1.5 })).toEqual(['servers[0].max_concurrent_calls: must be a whole number']);
    expect(issues({ parallel_calls: false, max_concurrent_calls: 4 })).toEqual(['servers[0].max_concurrent_calls: must be 1 (or unset) when parallel_calls is false']);
    expect(issues({ parallel_calls: 'no' })[0]).toMatch(/^servers\[0\]\.parallel_calls: /);
    expect(issues({ parallel_calls: true, max_concurrent_calls: 8 })).toEqual([]);
  });
});

describe('idle disconnect', () => {
  test('after idle_timeout_secs without calls the server is disconnected (its process ends); the next call reconnects; a long call is never cut', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    const { isAlive, eventually } = await import('../support/poll.js');
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('lazy', 'ok', { idle_timeout_secs: 1, env: { FIXTURE_LOG: log } })]), { agent: 'test', logger: memoryLogger() });
    const pids = () => readLog(log).filter((line) => line.startsWith('started ')).map((line) => Number(line.split(' ')[1]));
    // A call longer than the idle time keeps the session.
    expect(textOf(await runtime.call('lazy__slow', { ms: 1_500 }))).toBe('slow done');
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
    const first = pids()[0]!;
    await eventually(() => runtime.diagnostics()[0]!.state === 'idle', { what: 'the idle disconnect' });
    await eventually(() => !isAlive(first), { what: 'the idle server process to end' });
    // The catalog keeps its tools while idle; a call reconnects.
    expect(Object.keys(await runtime.tools())).toContain('lazy__echo');
    expect(textOf(await runtime.call('lazy__echo', { text: 'back' }))).toBe('back');
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
    expect(pids()).toHaveLength(2);
  });

  test('idle_timeout_secs is validated', () => {
    const result = validateMcpConfig({ servers: [{ name: 's', command: 'node', idle_timeout_secs: 0 }] });
    expect(result.ok ? [] : result.issues).toEqual([{ path: 'servers[0].idle_timeout_secs', message: 'must be greater than 0' }]);
  });
});
