import { createInvoker, createRegistry } from '@capnode/capabilities';
import { createMcpToolsSlot, isMcpClientError } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, realServer, textOf } from './helpers.js';
import { eventually } from '../support/poll.js';

const HANG_SECS = 120;

describe('progressive catalog: a broken server never stalls the agent', () => {
  test("a fast server's tools are registered and callable while a hanging server is still inside its connect timeout", async () => {
    const registry = createRegistry();
    const invoker = createInvoker({ registry, hooks: [createMcpToolsSlot()] });
    const changes: string[][] = [];
    registry.subscribe(() => changes.push(registry.commands().map((command) => command.name)));
    const controller = new AbortController();
    const config = grantAll([fixtureServer('stuck', 'never-answer', { connect_timeout_secs: HANG_SECS }), fixtureServer('fast')]);
    let settled = false;
    const starting = createMcpRuntime(config, { agent: 'test', invoker, signal: controller.signal, logger: memoryLogger() });
    void starting.then(
      () => (settled = true),
      () => (settled = true),
    );

    await eventually(() => registry.resolve('fast__echo'), { timeoutMs: 60_000 });
    const outcome = await invoker.invoke({ command: 'fast__echo', args: { text: 'not held back' }, transport: 'internal' });
    expect(outcome.result).toEqual({ ok: true, content: [{ type: 'text', text: 'not held back' }] });
    // Still well inside the hanging server's 120 s connect timeout.
    expect(settled).toBe(false);
    expect(registry.commands().every((command) => command.name.startsWith('fast__'))).toBe(true);
    expect(changes.length).toBeGreaterThan(0);

    controller.abort();
    const failure = await starting.catch((error: unknown) => error);
    expect(isMcpClientError(failure) && failure.code).toBe('aborted');
    expect(registry.commands()).toEqual([]);
  }, 90_000);

  test('waitForServers: false resolves at once; a real server is usable early, a late one adds its tools, a hung one becomes a diagnostic', async () => {
    const registry = createRegistry();
    const invoker = createInvoker({ registry, hooks: [createMcpToolsSlot()] });
    const config = grantAll([
      fixtureServer('stuck', 'never-answer', { connect_timeout_secs: 5 }),
      fixtureServer('late', 'ok', { env: { FIXTURE_INIT_DELAY_MS: '2000' } }),
      { name: 'everything', command: process.execPath, args: [realServer('server-everything'), 'stdio'] },
    ]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', invoker, waitForServers: false, logger: memoryLogger() });
    expect(runtime.diagnostics().map((d) => d.state)).toEqual(['connecting', 'connecting', 'connecting']);

    await eventually(() => registry.resolve('everything__echo'), { timeoutMs: 60_000 });
    expect(Object.keys(await runtime.tools())).toContain('everything__echo');
    expect(textOf(await runtime.call('everything__echo', { message: 'early' }))).toContain('early');
    expect(runtime.diagnostics().find((d) => d.server === 'stuck')!.state).toBe('connecting');

    let lateSeen = false;
    const unsubscribe = registry.subscribe(() => {
      if (registry.resolve('late__echo')) lateSeen = true;
    });
    await runtime.ready();
    unsubscribe();
    expect(lateSeen || registry.resolve('late__echo') !== undefined).toBe(true);
    expect(textOf(await runtime.call('late__echo', { text: 'late' }))).toBe('late');
    const stuck = runtime.diagnostics().find((d) => d.server === 'stuck')!;
    expect(stuck).toMatchObject({ state: 'failed', toolCount: 0 });
    expect(stuck.error).toMatch(/did not finish connecting within 5 s/);
    expect(Object.keys(await runtime.tools()).some((name) => name.startsWith('stuck__'))).toBe(false);
  }, 120_000);

  test('names do not depend on arrival order: the same catalog whichever server is ready first', async () => {
    // Server 'a' lists 'b__echo'; server 'a_b' lists 'echo' (a server name with '__' is refused).
    const config = (slow: 'a' | 'a_b') =>
      grantAll([
        fixtureServer('a', 'ok', { env: { FIXTURE_TOOL: 'b__echo', ...(slow === 'a' ? { FIXTURE_INIT_DELAY_MS: '1500' } : {}) } }),
        fixtureServer('a_b', 'ok', slow === 'a_b' ? { env: { FIXTURE_INIT_DELAY_MS: '1500' } } : {}),
      ]);
    const catalogs: string[][] = [];
    for (const slow of ['a', 'a_b'] as const) {
      const registry = createRegistry();
      await using runtime = await createMcpRuntime(config(slow), { agent: 'test', invoker: createInvoker({ registry, hooks: [createMcpToolsSlot()] }), logger: memoryLogger() });
      const tools = await runtime.tools();
      expect(tools['a__b__echo']).toMatchObject({ server: 'a', tool: 'b__echo' });
      expect(tools['a_b__echo']).toMatchObject({ server: 'a_b', tool: 'echo' });
      expect(runtime.warnings).toEqual([]);
      catalogs.push(Object.keys(tools).sort());
    }
    expect(catalogs[0]).toEqual(catalogs[1]);
  }, 120_000);
});
