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

it('servers import skips the entries capnode config --write made for this host (Cursor with ?toolNames=underscore, Claude Desktop with --tool-names)', async () => {
  using dir = tempHome();
  using user = tempHome();
  await using serve = await startServe(dir.home);
  const env = { HOME: user.home, USERPROFILE: user.home, APPDATA: join(user.home, 'AppData'), XDG_CONFIG_HOME: join(user.home, '.config') };
  const cursor = await runCli(['config', 'cursor', '--write', '--yes'], dir.home, env);
  expect(cursor.code, cursor.stderr).toBe(0);
  const desktop = await runCli(['config', 'claude-desktop', '--write', '--yes', '--tool-names', 'underscore'], dir.home, env);
  expect(desktop.code, desktop.stderr).toBe(0);
  const cursorFile = join(user.home, '.cursor', 'mcp.json');
  expect(readFileSync(cursorFile, 'utf8')).toContain(`${serve.url}?toolNames=underscore`);
  const desktopFile = /wrote (\S+); restart/.exec(desktop.stdout + desktop.stderr)?.[1];
  expect(desktopFile, desktop.stdout + desktop.stderr).toBeDefined();
  expect(readFileSync(desktopFile!, 'utf8')).toContain('"--tool-names"');
  for (const file of [cursorFile, desktopFile!]) {
    const imported = await runCli(['servers', 'import', file], dir.home);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 0 MCP servers');
    expect(imported.stderr).toContain('skipped:');
  }
}, 60_000);
