// `/api/clients`: the dashboard's "Connect a client", backed by the same module as `capnode config
// <client> --write`, against a real host and a temporary user home (a real config is never touched).
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTestHost, tempDir, type TestHost } from '../support/testHost.js';
import { signIn, userHomeEnv, type DashboardClient } from './apiClient.js';

const CLI_BIN = fileURLToPath(new URL('../../apps/cli/dist/bin.js', import.meta.url));
const OTHER = { command: '/usr/bin/true', args: ['--keep-me'] };

interface ClientRow {
  id: string;
  name: string;
  snippet: { mcpServers?: Record<string, { command?: string; args?: string[]; env?: Record<string, string>; url?: string }> };
  configPath: string;
  configured: boolean;
  instructions?: string[];
  command?: string[];
}

interface Preview {
  path: string;
  diff: string;
  before: string;
  created: boolean;
  changed: boolean;
}

/** A host whose user is `userHome` (HOME, XDG_CONFIG_HOME, APPDATA) and whose PATH is `path`. */
async function hostFor(userHome: string, path: string): Promise<{ test: TestHost; client: DashboardClient }> {
  const env = { ...userHomeEnv(userHome), PATH: path, CAPNODE_HOME: undefined };
  const test = await startTestHost({ settings: { dashboard: { enabled: true, port: 0 } }, host: { env } });
  return { test, client: await signIn(test.host, test.home) };
}

/** A PATH with the system tools and no `capnode` (the launch runs Node by its absolute path). */
const PATH_WITHOUT_CAPNODE = [dirname(process.execPath), '/usr/bin', '/bin'].filter((dir) => !existsSync(join(dir, 'capnode'))).join(':');

async function clients(client: DashboardClient): Promise<ClientRow[]> {
  const response = await client.api('/api/clients');
  expect(response.status).toBe(200);
  return ((await response.json()) as { clients: ClientRow[] }).clients;
}

describe('dashboard /api/clients', () => {
  it('lists every client with its snippet; Claude Desktop runs the CLI (`capnode mcp`), never this process\'s script', async () => {
    using user = tempDir('capnode-user-');
    const { test, client } = await hostFor(user.path, PATH_WITHOUT_CAPNODE);
    await using _host = test;
    const rows = await clients(client);
    expect(rows.map((row) => row.id)).toEqual(['claude', 'claude-desktop', 'cursor', 'vscode']);
    expect(rows.map((row) => row.name)).toEqual(['Claude Code', 'Claude Desktop', 'Cursor', 'VS Code']);
    for (const row of rows) {
      expect(row.configured).toBe(false);
      expect(row.configPath.startsWith(user.path)).toBe(true);
      // One paragraph for the page (the CLI's lines are wrapped for a terminal).
      expect(row.instructions).toEqual([expect.stringMatching(/^[A-Z].* .*[^ ]$/)]);
    }
    const byId = Object.fromEntries(rows.map((row) => [row.id, row]));
    expect(byId.cursor!.snippet.mcpServers!.capnode!.url).toBe(`${test.url}?toolNames=underscore`);
    expect(byId.claude!.command?.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
    expect(byId.cursor!.command).toBeUndefined();
    expect(byId.claude!.instructions![0]).toMatch(/^Put this in \.mcp\.json/);
    // No `capnode` on PATH: Node with the CLI's bin script, and the host's config directory.
    const desktop = byId['claude-desktop']!.snippet.mcpServers!.capnode!;
    expect(desktop).toEqual({ command: process.execPath, args: [CLI_BIN, 'mcp'], env: { CAPNODE_HOME: test.home } });
    expect(desktop.args).not.toContain(process.argv[1]);
  });

  it('uses the installed `capnode` on PATH for Claude Desktop and writes a new config without a backup', async () => {
    using user = tempDir('capnode-user-');
    using bin = tempDir('capnode-bin-');
    const capnode = join(bin.path, 'capnode');
    writeFileSync(capnode, '#!/bin/sh\nexit 0\n');
    chmodSync(capnode, 0o755);
    const { test, client } = await hostFor(user.path, `${bin.path}:${PATH_WITHOUT_CAPNODE}`);
    await using _host = test;
    const row = (await clients(client)).find((entry) => entry.id === 'claude-desktop')!;
    expect(row.snippet.mcpServers!.capnode).toEqual({ command: capnode, args: ['mcp'], env: { CAPNODE_HOME: test.home } });

    const preview = (await (await client.api('/api/clients/claude-desktop/preview', { method: 'POST' })).json()) as Preview;
    expect(preview).toMatchObject({ path: row.configPath, created: true, changed: true, before: '' });
    expect(preview.diff).toContain('--- /dev/null');
    const write = await client.api('/api/clients/claude-desktop/write', { method: 'POST', body: { expected: preview.before } });
    expect(write.status).toBe(200);
    expect(await write.json()).toEqual({ path: row.configPath, changed: true });
    expect(JSON.parse(readFileSync(row.configPath, 'utf8'))).toEqual({ mcpServers: { capnode: { command: capnode, args: ['mcp'], env: { CAPNODE_HOME: test.home } } } });
    expect((await clients(client)).find((entry) => entry.id === 'claude-desktop')!.configured).toBe(true);
  });

  it('previews, then writes Cursor\'s config: other entries kept, backup of the old file, token masked in the diff', async () => {
    using user = tempDir('capnode-user-');
    const file = join(user.path, '.cursor', 'mcp.json');
    mkdirSync(dirname(file));
    const original = `${JSON.stringify({ mcpServers: { other: OTHER }, theme: 'dark' }, null, 2)}\n`;
    writeFileSync(file, original);
    const { test, client } = await hostFor(user.path, PATH_WITHOUT_CAPNODE);
    await using _host = test;
    const token = readFileSync(test.host.paths.mcpToken, 'utf8').trim();

    const response = await client.api('/api/clients/cursor/preview', { method: 'POST' });
    expect(response.status).toBe(200);
    const preview = (await response.json()) as Preview;
    expect(preview).toMatchObject({ path: file, before: original, created: false, changed: true });
    expect(preview.diff).toContain('"capnode"');
    expect(preview.diff).not.toContain(token);
    // Nothing is written by a preview.
    expect(readFileSync(file, 'utf8')).toBe(original);

    const write = await client.api('/api/clients/cursor/write', { method: 'POST', body: { expected: preview.before } });
    expect(write.status).toBe(200);
    const written = (await write.json()) as { path: string; backup?: string; changed: boolean };
    expect(written.path).toBe(file);
    expect(written.changed).toBe(true);
    expect(written.backup).toMatch(/mcp\.json\.capnode-backup-/);
    expect(readFileSync(written.backup!, 'utf8')).toBe(original);
    const config = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, { url?: string }>; theme: string };
    expect(config.mcpServers.other).toEqual(OTHER);
    expect(config.theme).toBe('dark');
    expect(config.mcpServers.capnode!.url).toBe(`${test.url}?toolNames=underscore`);
    // Cursor got a token of its own, named after it; the diff never showed it.
    const store = JSON.parse(readFileSync(join(test.home, 'mcp-tokens.json'), 'utf8')) as { tokens: Array<{ name: string; token: string }> };
    const cursorToken = store.tokens.find((entry) => entry.name === 'cursor')!.token;
    expect((config.mcpServers.capnode as { headers?: Record<string, string> }).headers?.Authorization).toBe(`Bearer ${cursorToken}`);
    expect(preview.diff).not.toContain(cursorToken);
    expect((await clients(client)).find((entry) => entry.id === 'cursor')!.configured).toBe(true);

    // Once written, a second preview changes nothing and a write keeps the file as it is.
    const again = (await (await client.api('/api/clients/cursor/preview', { method: 'POST' })).json()) as Preview;
    expect(again.changed).toBe(false);
    const noop = (await (await client.api('/api/clients/cursor/write', { method: 'POST', body: { expected: again.before } })).json()) as { changed: boolean; backup?: string };
    expect(noop).toEqual({ path: file, changed: false });
  });

  it('refuses a write when the file changed since the preview (409), and a file it cannot parse (400), leaving both alone', async () => {
    using user = tempDir('capnode-user-');
    const file = join(user.path, '.cursor', 'mcp.json');
    mkdirSync(dirname(file));
    writeFileSync(file, `${JSON.stringify({ mcpServers: { other: OTHER } })}\n`);
    const { test, client } = await hostFor(user.path, PATH_WITHOUT_CAPNODE);
    await using _host = test;

    const preview = (await (await client.api('/api/clients/cursor/preview', { method: 'POST' })).json()) as Preview;
    const edited = `${JSON.stringify({ mcpServers: { other: OTHER, mine: { command: 'mine' } } })}\n`;
    writeFileSync(file, edited);
    const conflict = await client.api('/api/clients/cursor/write', { method: 'POST', body: { expected: preview.before } });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe('conflict');
    expect(readFileSync(file, 'utf8')).toBe(edited);

    const commented = '{\n  // my servers\n  "mcpServers": {}\n}\n';
    writeFileSync(file, commented);
    const unparseable = await client.api('/api/clients/cursor/preview', { method: 'POST' });
    expect(unparseable.status).toBe(400);
    expect(((await unparseable.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'invalid', message: expect.stringContaining('cannot parse') });
    const refused = await client.api('/api/clients/cursor/write', { method: 'POST', body: { expected: commented } });
    expect(refused.status).toBe(400);
    expect(readFileSync(file, 'utf8')).toBe(commented);
    expect(readdirSync(dirname(file))).toEqual(['mcp.json']);

    // Without the confirmed `before`, or for a client nobody knows: refused, nothing written.
    expect((await client.api('/api/clients/claude/write', { method: 'POST', body: {} })).status).toBe(400);
    expect(existsSync(join(user.path, '.claude.json'))).toBe(false);
    expect((await client.api('/api/clients/notepad/preview', { method: 'POST' })).status).toBe(404);
    expect((await client.api('/api/clients/notepad/write', { method: 'POST', body: { expected: '' } })).status).toBe(404);
  });
});
