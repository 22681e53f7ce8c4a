import { createMcpRuntime } from '@capnode/mcp-client/node';
import { expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';

test('hostile and duplicate tool names are sanitized, bounded and unique, with warnings naming both sides', async () => {
  const logger = memoryLogger();
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('9 bad server!', 'hostile-names')]), { agent: 'test', logger });
  const names = Object.keys(await runtime.tools());
  expect(names).toEqual([
    'mcp-9-bad-server-__..-..-etc-passwd'.replace(/\./g, '-'),
    'mcp-9-bad-server-__Echo',
    'mcp-9-bad-server-__echo-2',
    'mcp-9-bad-server-__ECHO-3',
    `mcp-9-bad-server-__${'x'.repeat(45)}`,
    `mcp-9-bad-server-__${'x'.repeat(43)}-2`,
    'mcp-9-bad-server-__w-rd-n-me',
    'mcp-9-bad-server-__a-b-c',
    'mcp-9-bad-server-__123',
  ]);
  for (const name of names) {
    expect(name).toMatch(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/);
  }
  expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
  expect(runtime.warnings.some((w) => w.includes("tool 'echo' of server '9 bad server!'") && w.includes("tool 'Echo'"))).toBe(true);
  expect(runtime.diagnostics()[0]!.warnings).toEqual(["duplicate tool 'echo' skipped"]);
  const tools = await runtime.tools();
  expect(tools['mcp-9-bad-server-__echo-2']).toMatchObject({ server: '9 bad server!', tool: 'echo', description: 'lower' });
});

test('tools with invalid schemas are skipped with a diagnostic; valid ones are kept', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'invalid-schema')]), { agent: 'test' });
  const tools = await runtime.tools();
  expect(Object.keys(tools)).toEqual(['fx__good', 'fx__also-good']);
  expect(tools['fx__also-good']!.description).toBe('');
  expect(tools['fx__also-good']!.inputSchema).toEqual({ type: 'object', properties: { a: { type: 'number' } } });
  const warnings = runtime.diagnostics()[0]!.warnings;
  expect(warnings).toHaveLength(4);
  expect(warnings.join('\n')).toMatch(/'string-schema' has no object inputSchema/);
});

test('tools are listed across pages; a failing page keeps what was listed', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('paged', 'paged'), fixtureServer('broken', 'paged-fail')]), { agent: 'test' });
  const tools = await runtime.tools();
  expect(Object.keys(tools).filter((n) => n.startsWith('paged__'))).toHaveLength(15);
  expect(Object.keys(tools).filter((n) => n.startsWith('broken__'))).toHaveLength(4);
  const broken = runtime.diagnostics().find((d) => d.server === 'broken')!;
  expect(broken.state).toBe('connected');
  expect(broken.warnings[0]).toMatch(/failed on page 2; kept the first 4 tools/);
});

test('the listing deadline bounds the whole listing, not each page: pages that each answer in time still run out', async () => {
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('slow', 'paged-slow', { connect_timeout_secs: 1 })]), { agent: 'test' });
  const listed = Object.keys(await runtime.tools()).filter((n) => n.startsWith('slow__'));
  const slow = runtime.diagnostics()[0]!;
  expect(slow.state).toBe('connected');
  expect(slow.warnings[0]).toMatch(/^tools\/list failed on page [2-4]; kept the first (4|8|12) tools: no answer within 1 s$/);
  expect(listed.length).toBeGreaterThan(0);
  expect(listed.length).toBeLessThan(15);
});

test('tools/list_changed invalidates the catalog; the next use re-lists once, even under a notification storm', async () => {
  const logger = memoryLogger();
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', logger });
  expect(Object.keys(await runtime.tools())).not.toContain('fx__added');
  expect(textOf(await runtime.call('fx__list-count'))).toBe('1');

  await runtime.call('fx__change');
  expect(textOf(await runtime.call('fx__list-count'))).toBe('2');
  expect(Object.keys(await runtime.tools())).toContain('fx__added');
  expect(textOf(await runtime.call('fx__added'))).toBe('added works');

  const before = Number(textOf(await runtime.call('fx__list-count')));
  expect(textOf(await runtime.call('fx__storm', { count: 2_000 }))).toBe('sent 2000');
  await Promise.all([runtime.tools(), runtime.tools(), runtime.tools(), runtime.call('fx__echo', { text: 'a' }), runtime.call('fx__echo', { text: 'b' })]);
  await runtime.tools();
  const after = Number(textOf(await runtime.call('fx__list-count')));
  expect(after - before).toBeGreaterThanOrEqual(1);
  expect(after - before).toBeLessThanOrEqual(2);
  expect(runtime.diagnostics()[0]!.state).toBe('connected');
});
