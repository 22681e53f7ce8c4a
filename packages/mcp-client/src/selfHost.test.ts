import { describe, expect, test } from 'vitest';
import { importMcpServers } from './importers.js';
import { hostInstanceOf, selfEntryReason, type SelfHostIdentity } from './selfHost.js';

const self: SelfHostIdentity = { ports: [8765, 45123], home: '/home/u/.config/capnode', bins: ['/opt/capnode/lib/node_modules/capnode/dist/bin.js'] };

describe('selfEntryReason', () => {
  test.each([
    'http://127.0.0.1:8765/',
    'http://localhost:8765/mcp',
    'http://LOCALHOST:8765',
    'http://[::1]:8765/mcp',
    'http://127.1.2.3:8765/sse',
    'http://0.0.0.0:8765/',
    'http://[::ffff:127.0.0.1]:45123/',
  ])('its own URL %s', (url) => {
    expect(selfEntryReason({ url }, self)).toMatch(/this capnode host's MCP endpoint/);
  });

  test.each(['http://127.0.0.1:9999/', 'https://example.com:8765/mcp', 'http://192.168.1.2:8765/', 'not a url'])('another URL %s', (url) => {
    expect(selfEntryReason({ url }, self)).toBeUndefined();
  });

  test.each([
    [{ command: 'capnode', args: ['mcp'] }],
    [{ command: '/usr/local/bin/capnode', args: ['mcp'] }],
    [{ command: 'C:\\Users\\u\\AppData\\Roaming\\npm\\capnode.cmd', args: ['mcp'] }],
    [{ command: 'capnode', args: ['serve', '--stdio'] }],
    [{ command: 'node', args: ['/opt/capnode/lib/node_modules/capnode/dist/bin.js', 'mcp'] }],
    [{ command: '/usr/bin/node', args: ['/work/capnode/apps/cli/dist/bin.js', 'mcp'] }],
    [{ command: 'npx', args: ['-y', 'capnode', 'mcp'] }],
    [{ command: '/usr/bin/node', args: ['/usr/lib/node_modules/@capnode/tray/dist/bin.js', 'mcp'] }],
    [{ command: 'capnode-tray', args: ['mcp'] }],
    [{ command: 'npx', args: ['capnode@latest', 'mcp'] }],
    [{ command: 'pnpm', args: ['dlx', 'capnode', 'mcp'] }],
    [{ command: 'cmd', args: ['/c', 'npx', '-y', 'capnode', 'mcp'] }],
    [{ command: 'capnode', args: ['mcp'], env: { CAPNODE_HOME: '/home/u/.config/capnode/' } }],
    [{ command: 'env', args: ['node', '/work/capnode/apps/cli/dist/bin.js', 'mcp'] }],
    [{ command: '/usr/bin/env', args: ['-u', 'DISPLAY', 'CAPNODE_HOME=/home/u/.config/capnode', 'capnode', 'mcp'] }],
  ])('runs capnode mcp for this config directory: %j', (entry) => {
    expect(selfEntryReason(entry, self)).toMatch(/capnode's own stdio server/);
  });

  test.each([
    [{ command: 'capnode', args: ['mcp'], env: { CAPNODE_HOME: '/tmp/other-capnode' } }],
    [{ command: 'capnode', args: ['status'] }],
    [{ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] }],
    [{ command: 'node', args: ['server.js', 'mcp'] }],
    [{ command: 'capnode', args: ['serve'] }],
    [{ command: 'env', args: ['CAPNODE_HOME=/tmp/other-capnode', 'capnode', 'mcp'] }],
    [{ command: 'env', args: ['FOO=1'] }],
  ])('is not this host: %j', (entry) => {
    expect(selfEntryReason(entry, self)).toBeUndefined();
  });

  test('hostInstanceOf reads the capnode/host experimental capability', () => {
    expect(hostInstanceOf({ experimental: { 'capnode/host': { instance: 'abc' } } })).toBe('abc');
    expect(hostInstanceOf({ experimental: { 'capnode/host': { instance: 3 } } })).toBeUndefined();
    expect(hostInstanceOf(undefined)).toBeUndefined();
  });
});

test('importMcpServers skips entries that are this host, with a warning, and keeps the rest', () => {
  const result = importMcpServers(
    {
      mcpServers: {
        capnode: { command: 'npx', args: ['-y', 'capnode', 'mcp'] },
        'capnode-http': { type: 'http', url: 'http://localhost:8765/mcp' },
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
      },
    },
    { self },
  );
  expect(result.issues).toEqual([]);
  expect(result.servers.map((server) => server.name)).toEqual(['everything']);
  expect(result.warnings).toEqual([
    { path: 'mcpServers.capnode', message: expect.stringMatching(/^skipped: it runs capnode's own stdio server .*offer its tools back/) },
    { path: 'mcpServers["capnode-http"]', message: expect.stringMatching(/^skipped: its URL http:\/\/localhost:8765\/mcp is this capnode host's MCP endpoint/) },
  ]);
  // Without the identity (a library user importing a file) nothing is skipped.
  expect(importMcpServers({ mcpServers: { capnode: { command: 'capnode', args: ['mcp'] } } }).servers).toHaveLength(1);
});
