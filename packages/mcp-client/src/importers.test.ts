import { describe, expect, test } from 'vitest';
import { validateMcpConfig } from './config.js';
import { importMcpServers } from './importers.js';

describe('importMcpServers', () => {
  test('reads Claude Desktop / .mcp.json mcpServers, including http and sse entries', () => {
    const result = importMcpServers({
      mcpServers: {
        filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { DEBUG: '1' } },
        remote: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t0ken-value' } },
        legacy: { type: 'sse', url: 'https://example.com/sse' },
        off: { command: 'x', disabled: true, autoApprove: ['a'] },
      },
    });
    expect(result.issues).toEqual([]);
    expect(result.servers).toEqual([
      { name: 'filesystem', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { DEBUG: '1' } },
      { name: 'remote', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t0ken-value' }, transport: 'http' },
      { name: 'legacy', url: 'https://example.com/sse', transport: 'sse' },
      { name: 'off', command: 'x', enabled: false },
    ]);
    expect(result.warnings.map((w) => w.path)).toEqual(['mcpServers.off.autoApprove']);
    const validated = validateMcpConfig({ servers: result.servers });
    expect(validated.ok).toBe(true);
  });

  test("reads Cursor's format with ${env:NAME} and Claude Code's ${NAME:-default}", () => {
    const result = importMcpServers(
      {
        mcpServers: {
          github: { command: 'docker', args: ['run', '${workspaceFolder}'], env: { GITHUB_TOKEN: '${env:GH_TOKEN}' }, envFile: '.env' },
          api: { url: 'https://api.example.com/mcp', headers: { 'X-Key': '${API_KEY:-fallback}' } },
        },
      },
      { format: 'cursor', env: { GH_TOKEN: 'ghp_secret' }, workspaceFolder: '/work' },
    );
    expect(result.issues).toEqual([]);
    expect(result.servers[0]).toMatchObject({ args: ['run', '/work'], env: { GITHUB_TOKEN: 'ghp_secret' } });
    expect(result.servers[1]).toMatchObject({ headers: { 'X-Key': 'fallback' } });
    expect(result.warnings.map((w) => w.path)).toEqual(['mcpServers.github.envFile']);
  });

  test('unset variables are errors; without env they stay as written with a warning', () => {
    const input = { mcpServers: { a: { command: 'x', env: { TOKEN: '${MISSING}' } } } };
    expect(importMcpServers(input, { env: {} }).issues).toEqual([{ path: 'mcpServers.a.env.TOKEN', message: 'references the unset environment variable MISSING' }]);
    const kept = importMcpServers(input);
    expect(kept.servers[0]).toMatchObject({ env: { TOKEN: '${MISSING}' } });
    expect(kept.warnings[0]!.path).toBe('mcpServers.a.env.TOKEN');
  });

  test('reads VS Code servers and reports malformed entries with paths', () => {
    const result = importMcpServers({ servers: { a: { type: 'stdio', command: 'x' }, b: 'nope', c: { type: 'websocket', url: 'wss://x' } } });
    expect(result.servers.map((s) => s.name)).toEqual(['a', 'c']);
    expect(result.issues.map((i) => i.path)).toEqual(['servers.b', 'servers.c.type']);
    expect(importMcpServers([]).issues[0]!.path).toBe('(root)');
    expect(importMcpServers({}).issues[0]!.message).toMatch(/no MCP servers/);
  });

  test('imported entries go through the same validation (refused env keys)', () => {
    const imported = importMcpServers({ mcpServers: { bad: { command: 'node', env: { NODE_OPTIONS: '--inspect' } } } });
    const validated = validateMcpConfig({ servers: imported.servers });
    expect(validated.ok).toBe(false);
    expect(validated.ok ? [] : validated.issues.map((i) => i.path)).toEqual(['servers[0].env.NODE_OPTIONS']);
  });
});

test('a ${ inside an expanded env or header value is escaped, so the config does not expand it again', () => {
  const result = importMcpServers({ mcpServers: { a: { command: 'x', args: ['${V}'], env: { K: '${V}' } } } }, { env: { V: 'p${q}' } });
  expect(result.servers[0]).toMatchObject({ args: ['p${q}'], env: { K: 'p$${q}' } });
  const validated = validateMcpConfig({ servers: result.servers }, { env: {} });
  expect(validated.ok && validated.config.servers[0]!.env).toEqual({ K: 'p${q}' });
});
