import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { expect, test } from 'vitest';
import { fixtureServer, grantAll, readLog, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';
import { eventually, isAlive } from '../support/poll.js';

test('reload keeps unchanged sessions, reconnects changed ones, closes removed ones, and applies the new profile', async () => {
  using dir = tempDir();
  const server = (name: string, extra: Record<string, unknown> = {}) => fixtureServer(name, 'ok', { env: { FIXTURE_LOG: join(dir.path, name) }, ...extra });
  const starts = (name: string) => readLog(join(dir.path, name)).filter((line) => line.startsWith('started '));

  await using runtime = await createMcpRuntime(grantAll([server('one'), server('two')]), { agent: 'test' });
  await runtime.reload(grantAll([server('one'), server('two')]));
  expect(starts('one')).toHaveLength(1);
  expect(starts('two')).toHaveLength(1);

  const oldTwo = Number(starts('two')[0]!.split(' ')[1]);
  await runtime.reload(grantAll([server('one'), server('two', { tool_timeout_secs: 5 }), server('three')]));
  expect(starts('one')).toHaveLength(1);
  expect(starts('two')).toHaveLength(2);
  expect(runtime.diagnostics().map((d) => [d.server, d.state])).toEqual([
    ['one', 'connected'],
    ['two', 'connected'],
    ['three', 'connected'],
  ]);
  await eventually(() => !isAlive(oldTwo));
  expect(textOf(await runtime.call('three__echo', { text: 'new' }))).toBe('new');

  const three = Number(starts('three')[0]!.split(' ')[1]);
  await runtime.reload(grantAll([server('one'), server('two', { tool_timeout_secs: 5 })], { autonomy: 'full', excluded_tools: ['one__echo'] }));
  await eventually(() => !isAlive(three));
  const names = Object.keys(await runtime.tools());
  expect(names).not.toContain('one__echo');
  expect(names.some((n) => n.startsWith('three__'))).toBe(false);
  expect(textOf(await runtime.call('two__echo', { text: 'kept' }))).toBe('kept');
  expect(starts('one')).toHaveLength(1);
});
