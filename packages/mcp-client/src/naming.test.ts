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
