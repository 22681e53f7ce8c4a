import { describe, expect, it } from 'vitest';
import { clientMcpsToMcpJson } from './openagentMcps.js';

describe("OpenAgent's client-mcps.toml", () => {
  it('reads the documented example as an .mcp.json shape', () => {
    const text = [
      'version = 1',
      '',
      '[[mcp]]',
      'name = "project-tools"',
      'command = ["project-mcp", "stdio"]',
      'env = { PROJECT_HOME = "/path/on/this/computer" }',
      'enabled = true',
      '',
      '[[mcp]]',
      "name = 'off'",
      'command = ["x"]',
      'enabled = false',
    ].join('\n');
    expect(clientMcpsToMcpJson(text)).toEqual({
      value: {
        mcpServers: {
          'project-tools': { command: 'project-mcp', args: ['stdio'], env: { PROJECT_HOME: '/path/on/this/computer' } },
          off: { command: 'x', disabled: true },
        },
      },
      issues: [],
    });
  });

  it('names every problem and imports nothing then', () => {
    expect(clientMcpsToMcpJson('version = 2\n[[mcp]]\nname = "a"\ncommand = "a b"\n[[mcp]]\nname = "b"\ncommand = ["b"]\nenv = { K = 1 }\n').issues).toEqual([
      { path: 'version', message: 'must be 1' },
      { path: 'mcp[0].command', message: 'must be a non-empty array of strings (the argv)' },
      { path: 'mcp[1].env', message: 'must be a table of strings' },
    ]);
    expect(clientMcpsToMcpJson('version = ').issues[0]!.message).toMatch(/^not valid TOML/);
    expect(clientMcpsToMcpJson('version = 1\n[[mcp]]\nname = "a"\ncommand = ["a"]\n[[mcp]]\nname = "a"\ncommand = ["a"]\n').issues).toEqual([{ path: 'mcp[1].name', message: "'a' is listed twice" }]);
  });
});
