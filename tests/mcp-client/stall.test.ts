import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { activeHandles, expectNoHandlesLeft, fixtureServer, grantAll, memoryLogger, readLog, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';
import { eventually } from '../support/poll.js';

/** Milliseconds `run` takes. */
async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await run();
  return [value, performance.now() - started];
}

describe('never stall: a failed or hung listing', () => {
  test('initialize answered but tools/list never: tools() does not wait a connect timeout; the listing retries in the background with backoff', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    const baseline = activeHandles();
    const config = grantAll([fixtureServer('stuck', 'hang-list', { connect_timeout_secs: 1, env: { FIXTURE_LOG: log } }), fixtureServer('good')]);
    const runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
    const stuck = runtime.diagnostics().find((d) => d.server === 'stuck')!;
    expect(stuck).toMatchObject({ state: 'connected', toolCount: 0 });
    expect(stuck.listError).toMatch(/tools\/list failed: no answer within 1 s/);

    // Retries run in the background (after 1 s, then 2 s); none of them is waited for.
    for (let i = 0; i < 3; i += 1) {
      const [tools, ms] = await timed(() => runtime.tools());
      expect(Object.keys(tools).every((name) => name.startsWith('good__'))).toBe(true);
      expect(ms).toBeLessThan(900);
      expect(textOf(await runtime.call('good__echo', { text: `turn ${i}` }))).toBe(`turn ${i}`);
    }
    await eventually(() => readLog(log).filter((line) => line.startsWith('tools/list ')).length >= 3, { what: 'two background retries' });
    await runtime.close();
    const listings = readLog(log).filter((line) => line.startsWith('tools/list ')).length;
    await expectNoHandlesLeft(baseline);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(readLog(log).filter((line) => line.startsWith('tools/list ')).length).toBe(listings);
  });

  test('a hung re-list after list_changed keeps the last good catalog and blocks neither tools() nor calls', async () => {
    const config = grantAll([fixtureServer('fx', 'hang-relist', { connect_timeout_secs: 30 }), fixtureServer('other')]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
    expect(textOf(await runtime.call('fx__change'))).toBe('changed');
    // The re-list of fx now hangs for up to 30 s.
    const [tools, ms] = await timed(() => runtime.tools());
    expect(ms).toBeLessThan(5_000);
    expect(Object.keys(tools)).toContain('fx__echo');
    expect(Object.keys(tools)).toContain('other__echo');
    const [results, callMs] = await timed(() => Promise.all([runtime.call('fx__echo', { text: 'known' }), runtime.call('other__echo', { text: 'other' })]));
    expect(results.map(textOf)).toEqual(['known', 'other']);
    expect(callMs).toBeLessThan(5_000);
    const [, againMs] = await timed(() => runtime.tools());
    expect(againMs).toBeLessThan(5_000);
    expect(runtime.diagnostics().find((d) => d.server === 'fx')).toMatchObject({ state: 'connected', toolCount: 15 });
  });

  test('list_changed from one of two servers re-lists only that server, once per burst', async () => {
    const config = grantAll([fixtureServer('noisy'), fixtureServer('quiet')]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
    expect(textOf(await runtime.call('noisy__storm', { count: 2_000 }))).toBe('sent 2000');
    await Promise.all([runtime.tools(), runtime.tools(), runtime.call('quiet__echo', { text: 'a' })]);
    await runtime.refresh();
    expect(textOf(await runtime.call('quiet__list-count'))).toBe('2');
    const noisy = Number(textOf(await runtime.call('noisy__list-count')));
    // 1 at start, 1-2 for the storm, 1 for refresh().
    expect(noisy).toBeGreaterThanOrEqual(3);
    expect(noisy).toBeLessThanOrEqual(4);

    expect(textOf(await runtime.call('noisy__change'))).toBe('changed');
    await eventually(async () => Object.keys(await runtime.tools()).includes('noisy__added'));
    expect(textOf(await runtime.call('quiet__list-count'))).toBe('2');
  });
});
