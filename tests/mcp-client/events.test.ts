import { createMcpRuntime } from '@capnode/mcp-client/node';
import type { McpRuntimeEvent } from '@capnode/mcp-client';
import { expect, test } from 'vitest';
import { eventually } from '../support/poll.js';
import { join } from 'node:path';
import { fixtureServer, grantAll, memoryLogger, readLog, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';

test('subscribe: server states and per-server catalog changes from start to close', async () => {
  const events: McpRuntimeEvent[] = [];
  const runtime = await createMcpRuntime(grantAll([fixtureServer('fx'), fixtureServer('gone', 'exit-at-start')]), { agent: 'test', logger: memoryLogger(), waitForServers: false });
  const unsubscribe = runtime.subscribe((event) => events.push(event));
  await runtime.ready();
  await eventually(() => events.some((e) => e.type === 'catalog-changed' && e.server === 'fx'), { what: 'the first catalog event' });
  expect(events).toContainEqual({ type: 'server-state', server: 'fx', state: 'connected', previous: 'connecting' });
  const failed = events.find((e) => e.type === 'server-state' && e.server === 'gone');
  expect(failed).toMatchObject({ state: 'failed', previous: 'connecting' });
  expect((failed as { error?: string }).error).toMatch(/\S/);
  const first = events.find((e) => e.type === 'catalog-changed' && e.server === 'fx') as Extract<McpRuntimeEvent, { type: 'catalog-changed' }>;
  expect(first.added).toContain('fx__echo');
  expect(first.removed).toEqual([]);

  events.length = 0;
  await runtime.call('fx__change');
  const changed = await eventually(() => events.find((e) => e.type === 'catalog-changed'), { what: 'the change event' });
  expect(changed).toEqual({ type: 'catalog-changed', server: 'fx', added: ['fx__added'], removed: [] });

  // A listener that throws is logged and does not stop the others.
  runtime.subscribe(() => {
    throw new Error('listener bug');
  });
  events.length = 0;
  await runtime.close();
  expect(events).toContainEqual({ type: 'server-state', server: 'fx', state: 'closed', previous: 'connected' });
  unsubscribe();
});

test('events(): an async iterator that a signal, a break or close() ends', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', logger: memoryLogger() });
  const controller = new AbortController();
  const seen: McpRuntimeEvent[] = [];
  const loop = (async () => {
    for await (const event of runtime.events({ signal: controller.signal })) {
      seen.push(event);
      if (event.type === 'catalog-changed') controller.abort();
    }
  })();
  await runtime.call('fx__change');
  await loop;
  expect(seen.at(-1)).toEqual({ type: 'catalog-changed', server: 'fx', added: ['fx__added'], removed: [] });

  const closing = (async () => {
    const collected: string[] = [];
    for await (const event of runtime.events()) collected.push(`${event.type}:${'state' in event ? event.state : ''}`);
    return collected;
  })();
  await runtime.close();
  // The iterator drains what was emitted before close, then ends.
  expect(await closing).toContain('server-state:closed');
  // After close a new iterator ends at once.
  const after = runtime.events();
  expect(await after.next()).toEqual({ value: undefined, done: true });
});

test('diagnostics arrive as events: skipped tools and failed re-lists', async () => {
  const events: McpRuntimeEvent[] = [];
  const servers = [fixtureServer('bad', 'invalid-schema'), fixtureServer('stuck', 'hang-relist', { connect_timeout_secs: 1 })];
  const runtime = await createMcpRuntime(grantAll(servers), { agent: 'test', logger: memoryLogger(), waitForServers: false });
  runtime.subscribe((event) => events.push(event));
  await runtime.ready();
  const diagnostics = () => events.filter((e) => e.type === 'diagnostic');
  expect(diagnostics()).toContainEqual({ type: 'diagnostic', server: 'bad', level: 'warning', message: "tool #3 skipped: 'string-schema' has no object inputSchema" });
  await runtime.refresh();
  expect(diagnostics()).toContainEqual({ type: 'diagnostic', server: 'stuck', level: 'error', message: 'tools/list failed: no answer within 1 s' });
  await runtime.close();
});

test('resources and prompts list_changed: only that server drops its cached lists, and an event says so', async () => {
  using dir = tempDir();
  const logOne = join(dir.path, 'one.log');
  const logTwo = join(dir.path, 'two.log');
  const asked = (log: string, method: string) => readLog(log).filter((line) => line.startsWith(method)).length;
  const events: McpRuntimeEvent[] = [];
  const servers = [fixtureServer('one', 'lists', { env: { FIXTURE_LOG: logOne } }), fixtureServer('two', 'lists', { env: { FIXTURE_LOG: logTwo } })];
  await using runtime = await createMcpRuntime(grantAll(servers), { agent: 'test', logger: memoryLogger() });
  runtime.subscribe((event) => events.push(event));
  const tools = await runtime.tools();
  const list = async (server: string) => JSON.parse(textOf(await tools.mcp_resources!.execute({ action: 'list', server }))) as { resources: { uri: string }[] };
  const prompts = async (server: string) => JSON.parse(textOf(await tools.mcp_prompts!.execute({ action: 'list', server }))) as { prompts: { name: string }[] };
  expect((await list('one')).resources[0]!.uri).toBe('one__mem://v0');
  expect((await list('two')).resources[0]!.uri).toBe('two__mem://v0');
  expect((await prompts('one')).prompts[0]!.name).toBe('one__prompt-v0');
  // Cached: listing again asks no server.
  await list('one');
  await prompts('one');
  expect([asked(logOne, 'resources/list'), asked(logOne, 'prompts/list'), asked(logTwo, 'resources/list')]).toEqual([1, 1, 1]);

  await runtime.call('one__change-lists');
  await eventually(() => events.filter((e) => e.type === 'list-changed').length === 2, { what: 'two list-changed events' });
  expect(events.filter((e) => e.type === 'list-changed')).toEqual([
    { type: 'list-changed', server: 'one', list: 'resources' },
    { type: 'list-changed', server: 'one', list: 'prompts' },
  ]);
  expect((await list('one')).resources[0]!.uri).toBe('one__mem://v1');
  expect((await prompts('one')).prompts[0]!.name).toBe('one__prompt-v1');
  // The other server's list stays cached (it did not change, and is not re-asked).
  expect((await list('two')).resources[0]!.uri).toBe('two__mem://v0');
  expect([asked(logOne, 'resources/list'), asked(logOne, 'prompts/list'), asked(logTwo, 'resources/list')]).toEqual([2, 2, 1]);
});

test('a server paused after repeated failures reports paused', async () => {
  const events: McpRuntimeEvent[] = [];
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', logger: memoryLogger() });
  runtime.subscribe((event) => events.push(event));
  for (let i = 0; i < 3; i += 1) expect((await runtime.call('fx__fail')).isError).toBe(true);
  expect(events).toContainEqual({ type: 'server-state', server: 'fx', state: 'paused', previous: 'connected' });
  expect(runtime.diagnostics()[0]!.state).toBe('paused');
});
