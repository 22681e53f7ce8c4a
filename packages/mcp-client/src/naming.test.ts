import { expect, test } from 'vitest';
import { assignToolNames, MAX_TOOL_NAME, toServerPart } from './naming.js';

test('names are <server>__<tool> with [A-Za-z0-9_-] only', () => {
  const { tools, warnings } = assignToolNames([{ server: 'file system', tools: ['read.file', 'wérd näme', 'a\u0000b'] }]);
  expect(tools.map((t) => t.name)).toEqual(['file-system__read-file', 'file-system__w-rd-n-me', 'file-system__a-b']);
  expect(warnings).toEqual([]);
  for (const tool of tools) expect(tool.name).toMatch(/^[A-Za-z][A-Za-z0-9_-]*$/);
});

test('a server part that does not start with a letter gets a prefix; it is at most 30 characters', () => {
  expect(toServerPart('123')).toBe('mcp-123');
  expect(toServerPart('_x')).toBe('mcp-_x');
  expect(toServerPart('a'.repeat(50))).toHaveLength(30);
  expect(toServerPart(`9${'b'.repeat(50)}`)).toBe(`mcp-9${'b'.repeat(25)}`);
});

test('the whole name is at most 64 characters', () => {
  const { tools } = assignToolNames([{ server: 's'.repeat(40), tools: ['t'.repeat(100)] }]);
  expect(tools[0]!.name).toHaveLength(MAX_TOOL_NAME);
  expect(tools[0]!.name.startsWith(`${'s'.repeat(30)}__`)).toBe(true);
});

test('case-insensitive collisions get -2, -3 within the budget, with a warning naming both', () => {
  const { tools, warnings } = assignToolNames([
    { server: 'srv', tools: ['Echo', 'echo', 'ECHO'] },
    { server: 'long', tools: ['x'.repeat(100), `${'x'.repeat(100)}y`] },
  ]);
  expect(tools.map((t) => t.name)).toEqual(['srv__Echo', 'srv__echo-2', 'srv__ECHO-3', `long__${'x'.repeat(58)}`, `long__${'x'.repeat(56)}-2`]);
  expect(tools[4]!.name).toHaveLength(64);
  expect(warnings).toHaveLength(3);
  expect(warnings[0]).toContain("tool 'echo' of server 'srv'");
  expect(warnings[0]).toContain("tool 'Echo' of server 'srv'");
});

test('servers whose parts collide are told apart, with a warning', () => {
  const { tools, serverParts, warnings } = assignToolNames([
    { server: 'my server', tools: ['a'] },
    { server: 'My-Server', tools: ['a'] },
  ]);
  expect([...serverParts.values()]).toEqual(['my-server', 'My-Server-2']);
  expect(tools.map((t) => t.name)).toEqual(['my-server__a', 'My-Server-2__a']);
  expect(warnings[0]).toContain("'My-Server'");
  expect(warnings[0]).toContain("'my server'");
});

test('reserved built-in names are never handed out; the result is deterministic', () => {
  const input = [{ server: 'sys', tools: ['run'] }];
  const first = assignToolNames(input, ['SYS__run']);
  expect(first.tools[0]!.name).toBe('sys__run-2');
  expect(first.warnings[0]).toContain('built-in');
  expect(assignToolNames(input, ['SYS__run'])).toEqual(first);
});

test('a server part never holds "__" nor ends in "_", so tools of different servers cannot collide', () => {
  expect(toServerPart('a__b')).toBe('a_b');
  expect(toServerPart('x___y_')).toBe('x_y-');
  expect(toServerPart(`${'a'.repeat(29)}_b`)).toBe(`${'a'.repeat(29)}-`);
  const { tools, warnings } = assignToolNames([
    { server: 'a', tools: ['b__echo', '_x'] },
    { server: 'a__b', tools: ['echo'] },
    { server: 'a_', tools: ['x'] },
  ]);
  expect(tools.map((t) => t.name)).toEqual(['a__b__echo', 'a___x', 'a_b__echo', 'a-__x']);
  expect(warnings).toEqual([]);
});

test('kept names stay with their tools; newcomers that collide get the suffix', () => {
  const cold = assignToolNames([{ server: 'srv', tools: ['Echo', 'echo'] }]);
  expect(cold.tools.map((t) => t.name)).toEqual(['srv__Echo', 'srv__echo-2']);
  // The server re-lists in the other order: names do not swap.
  const relisted = assignToolNames([{ server: 'srv', tools: ['echo', 'Echo', 'ECHO'] }], [], { keep: cold.tools });
  expect(relisted.tools).toEqual([
    { name: 'srv__echo-2', server: 'srv', tool: 'echo' },
    { name: 'srv__Echo', server: 'srv', tool: 'Echo' },
    { name: 'srv__ECHO-3', server: 'srv', tool: 'ECHO' },
  ]);
  expect(relisted.warnings.join('\n')).toContain("tool 'echo' of server 'srv' is exposed as 'srv__echo-2': 'srv__echo' is already taken by tool 'Echo' of server 'srv'");
  // A kept name that is now reserved, or whose tool is gone, is not kept.
  const reserved = assignToolNames([{ server: 'srv', tools: ['echo'] }], ['srv__echo-2'], { keep: cold.tools });
  expect(reserved.tools.map((t) => t.name)).toEqual(['srv__echo']);
});
