import { createMcpRuntime } from '@capnode/mcp-client/node';
import type { McpRuntimeEvent } from '@capnode/mcp-client';
import { expect, test } from 'vitest';
import { eventually, isAlive } from '../support/poll.js';
import { fixtureServer, grantAll, memoryLogger, runScenario, textOf } from './helpers.js';

// Validation and the basic disconnect/reconnect of idle_timeout_secs are in concurrency.test.ts; these
// check the event stream, the process exit, and that a harness still exits by itself.
test('idle_timeout_secs: an idle stdio server is disconnected (state idle, as an event) and its process exits; the catalog stays and the next call reconnects', async () => {
  const events: McpRuntimeEvent[] = [];
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'features', { idle_timeout_secs: 0.3 })]), { agent: 'test', logger: memoryLogger() });
  runtime.subscribe((event) => events.push(event));
  const firstPid = Number(textOf(await runtime.call('fx__pid')));
  expect(isAlive(firstPid)).toBe(true);
  await eventually(() => !isAlive(firstPid), { what: 'the idle server process to exit' });
  await eventually(() => runtime.diagnostics()[0]!.state === 'idle', { what: 'the idle state' });
  expect(runtime.diagnostics()[0]).toMatchObject({ state: 'idle', toolCount: 19 });
  expect(runtime.diagnostics()[0]!.error).toBeUndefined();
  expect(events).toContainEqual({ type: 'server-state', server: 'fx', state: 'idle', previous: 'connected' });
  // The catalog is kept while disconnected: no event removed tools, and tools() still lists them.
  expect(events.some((e) => e.type === 'catalog-changed' && e.removed.length > 0)).toBe(false);
  expect(Object.keys(await runtime.tools())).toContain('fx__echo');

  // Transparent to the caller: the next call reconnects (a new process) and answers.
  expect(textOf(await runtime.call('fx__echo', { text: 'back' }))).toBe('back');
  const secondPid = Number(textOf(await runtime.call('fx__pid')));
  expect(secondPid).not.toBe(firstPid);
  expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected' });
  expect(events).toContainEqual({ type: 'server-state', server: 'fx', state: 'connecting', previous: 'idle' });
  await runtime.close();
  expect(isAlive(secondPid)).toBe(false);
});

test('a call in flight holds the idle timer; a server without idle_timeout_secs stays connected', async () => {
  const servers = [fixtureServer('busy', 'features', { idle_timeout_secs: 0.2 }), fixtureServer('steady', 'features')];
  await using runtime = await createMcpRuntime(grantAll(servers), { agent: 'test', logger: memoryLogger() });
  const busyPid = Number(textOf(await runtime.call('busy__pid')));
  const steadyPid = Number(textOf(await runtime.call('steady__pid')));
  // A call longer than the idle time is not cut off, and the same process answers right after it.
  expect(textOf(await runtime.call('busy__slow', { ms: 600 }))).toBe('slow done');
  expect(Number(textOf(await runtime.call('busy__pid')))).toBe(busyPid);
  await eventually(() => !isAlive(busyPid), { what: 'the idle server process to exit' });
  expect(isAlive(steadyPid)).toBe(true);
  expect(runtime.diagnostics().find((d) => d.server === 'steady')).toMatchObject({ state: 'connected' });
});

test('a harness with idle disconnect, an event iterator and server-request hooks exits by itself after close()', async () => {
  const outcome = await runScenario(`
    const { parseMcpConfig } = await import(process.env.MCP_CLIENT);
    const { createMcpRuntime } = await import(process.env.MCP_CLIENT_NODE);
    const { config } = parseMcpConfig({
      servers: [{ name: 'fx', command: process.execPath, args: [process.env.FIXTURE, 'features'], idle_timeout_secs: 0.2 }],
      bundles: { all: { servers: ['fx'] } },
      agents: { test: { mcp_bundles: ['all'] } },
      risk_profiles: { test: { autonomy: 'full' } },
    });
    const runtime = await createMcpRuntime(config, {
      agent: 'test',
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      onSampling: () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'x' } }),
      roots: [{ uri: 'file:///tmp', name: 'tmp' }],
    });
    const seen = [];
    runtime.subscribe(() => {});
    const loop = (async () => { for await (const event of runtime.events()) seen.push(event.type + ':' + (event.state ?? '')); })();
    await runtime.call('fx__echo', { text: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 700));
    const back = await runtime.call('fx__echo', { text: 'b' });
    await runtime.close();
    await loop;
    console.log(JSON.stringify({ seen, back: back.content[0].text }));
  `);
  expect(outcome.stderr).toBe('');
  expect(outcome.exitedByItself).toBe(true);
  const report = outcome.report as { seen: string[]; back: string };
  expect(report.back).toBe('b');
  expect(report.seen).toEqual(expect.arrayContaining(['server-state:idle', 'server-state:connecting', 'server-state:connected', 'server-state:closed']));
});
