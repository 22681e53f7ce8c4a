import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliPath, runCli, startServe, tempHome } from './helpers.js';

it('servers import skips entries that are this host (its URL on any loopback spelling, capnode mcp in every form) with a warning', async () => {
  using dir = tempHome();
  await using serve = await startServe(dir.home);
  const port = new URL(serve.url).port;
  const file = join(dir.home, 'claude_desktop_config.json');
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        capnode: { command: 'npx', args: ['-y', 'capnode', 'mcp'] },
        'capnode-node': { command: process.execPath, args: [cliPath, 'mcp'] },
        'capnode-http': { type: 'http', url: `http://[::1]:${port}/mcp` },
        'capnode-default': { url: 'http://localhost:8765/' },
        'other-home': { command: 'capnode', args: ['mcp'], env: { CAPNODE_HOME: '/tmp/some-other-capnode' } },
        memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] },
      },
    }),
  );
  const imported = await runCli(['servers', 'import', file], dir.home);
  expect(imported.code, imported.stderr).toBe(0);
  expect(imported.stdout).toContain('imported 2 MCP servers');
  expect(imported.stdout).toContain('other-home, memory');
  for (const name of ['capnode', 'capnode-node']) expect(imported.stderr).toMatch(new RegExp(`mcpServers(\\.${name}|\\["${name}"\\]): skipped: it runs capnode's own stdio server`));
  expect(imported.stderr).toMatch(/skipped: its URL http:\/\/\[::1\]:\d+\/mcp is this capnode host's MCP endpoint/);
  expect(imported.stderr).toMatch(/skipped: its URL http:\/\/localhost:8765\/ is this capnode host's MCP endpoint/);
  const settings = JSON.parse(readFileSync(join(dir.home, 'settings.json'), 'utf8')) as { mcpClient: { servers: { name: string }[] } };
  expect(settings.mcpClient.servers.map((server) => server.name)).toEqual(['other-home', 'memory']);
}, 60_000);
