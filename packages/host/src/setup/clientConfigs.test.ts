import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clientConfigPath, clientSnippet, findClientConfigs, listClientTargets, mergeClientConfig, previewClientConfig, writeClientConfig, type ClientConfigOptions } from './clientConfigs.js';
import { isHostError } from '../errors.js';

const TOKEN = 'tok_0123456789abcdefghijklmnopqrstuvwxyzABCDE';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'capnode-clients-'));
  dirs.push(dir);
  return dir;
}

function options(userHome: string, extra: Partial<ClientConfigOptions> = {}): ClientConfigOptions {
  return { url: 'http://127.0.0.1:8765/', token: TOKEN, userHome, cwd: userHome, platform: 'linux', env: {}, launch: { command: '/usr/bin/node', args: ['/opt/capnode/dist/bin.js', 'mcp'] }, ...extra };
}

describe('clientConfigPath', () => {
  it('names each client file on Linux, macOS and Windows', () => {
    const linux = { platform: 'linux' as const, userHome: '/home/u', env: {} };
    const mac = { platform: 'darwin' as const, userHome: '/Users/u', env: {} };
    const win = { platform: 'win32' as const, userHome: 'C:\\Users\\u', env: { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' } };
    expect(clientConfigPath('claude', linux)).toBe('/home/u/.claude.json');
    expect(clientConfigPath('claude-desktop', linux)).toBe('/home/u/.config/Claude/claude_desktop_config.json');
    expect(clientConfigPath('claude-desktop', { ...linux, env: { XDG_CONFIG_HOME: '/x' } })).toBe('/x/Claude/claude_desktop_config.json');
    expect(clientConfigPath('claude-desktop', mac)).toBe('/Users/u/Library/Application Support/Claude/claude_desktop_config.json');
    expect(clientConfigPath('claude-desktop', win)).toContain(join('C:\\Users\\u\\AppData\\Roaming', 'Claude', 'claude_desktop_config.json'));
    expect(clientConfigPath('cursor', mac)).toBe('/Users/u/.cursor/mcp.json');
    expect(clientConfigPath('vscode', linux)).toBe('/home/u/.config/Code/User/mcp.json');
    expect(clientConfigPath('vscode', mac)).toBe('/Users/u/Library/Application Support/Code/User/mcp.json');
    expect(clientConfigPath('vscode', win)).toContain(join('Code', 'User', 'mcp.json'));
  });
});

describe('clientSnippet', () => {
  it('gives HTTP clients the URL and header, Claude Desktop the stdio launch, VS Code an input prompt', () => {
    const o = options('/home/u');
    expect(clientSnippet('claude', o).snippet).toEqual({ mcpServers: { capnode: { type: 'http', url: o.url, headers: { Authorization: `Bearer ${TOKEN}` } } } });
    expect(clientSnippet('claude', o).command).toContain('--transport');
    expect(clientSnippet('claude-desktop', o).snippet).toEqual({ mcpServers: { capnode: { command: '/usr/bin/node', args: ['/opt/capnode/dist/bin.js', 'mcp'] } } });
    // Cursor and VS Code take no '.' in tool names: their entries select underscore names.
    expect(clientSnippet('cursor', { ...o, serverName: 'mine' }).snippet).toEqual({ mcpServers: { mine: { url: `${o.url}?toolNames=underscore`, headers: { Authorization: `Bearer ${TOKEN}` } } } });
    const vscode = clientSnippet('vscode', o).snippet;
    expect(JSON.stringify(vscode)).not.toContain(TOKEN);
    expect(vscode.inputs).toEqual([expect.objectContaining({ id: 'capnode-token', password: true })]);
    expect((vscode.servers as Record<string, { url: string }>).capnode!.url).toBe(`${o.url}?toolNames=underscore`);
  });

  it('writes the chosen tool name style into the entry: the URL selector, or --tool-names for capnode mcp', () => {
    const o = options('/home/u');
    expect(clientSnippet('claude', { ...o, toolNames: 'underscore' }).command).toContain(`${o.url}?toolNames=underscore`);
    expect(clientSnippet('claude-desktop', { ...o, toolNames: 'underscore' }).snippet).toEqual({
      mcpServers: { capnode: { command: '/usr/bin/node', args: ['/opt/capnode/dist/bin.js', 'mcp', '--tool-names', 'underscore'] } },
    });
    expect(clientSnippet('cursor', { ...o, toolNames: 'dotted' }).snippet).toMatchObject({ mcpServers: { capnode: { url: `${o.url}?toolNames=dotted` } } });
  });
});

describe('mergeClientConfig', () => {
  it('keeps other entries, unknown keys and their order; replaces only its own entry', () => {
    const before = JSON.stringify({ numStartups: 4, mcpServers: { other: { command: 'x', env: { KEY: 'v' } }, capnode: { url: 'http://old/' } }, tail: [1, 2] }, null, 2);
    const after = JSON.parse(mergeClientConfig('claude', before, options('/h')));
    expect(Object.keys(after)).toEqual(['numStartups', 'mcpServers', 'tail']);
    expect(after.mcpServers.other).toEqual({ command: 'x', env: { KEY: 'v' } });
    expect(after.mcpServers.capnode.url).toBe('http://127.0.0.1:8765/');
    expect(after.tail).toEqual([1, 2]);
  });

  it('adds the VS Code input once and keeps the file byte for byte when nothing changes', () => {
    const once = mergeClientConfig('vscode', '{\n    "servers": {}, "inputs": [{"id": "x"}]\n}\n', options('/h'));
    expect(once).toMatch(/^\{\n {4}"servers"/);
    expect(JSON.parse(once).inputs.map((input: { id: string }) => input.id)).toEqual(['x', 'capnode-token']);
    expect(mergeClientConfig('vscode', once, options('/h'))).toBe(once);
  });

  it('refuses a file it cannot parse, or a section of the wrong shape, with invalid_config', () => {
    for (const text of ['{ // comment\n}', '[1]', '{"mcpServers": []}', '{"mcpServers": {}, ']) {
      let caught: unknown;
      try {
        mergeClientConfig('cursor', text, { ...options('/h'), path: '/h/.cursor/mcp.json' });
      } catch (error) {
        caught = error;
      }
      expect(isHostError(caught) && caught.code === 'invalid_config', text).toBe(true);
      expect((caught as Error).message).toContain('not changed');
    }
  });
});

describe('previewClientConfig / writeClientConfig', () => {
  it('previews a masked diff, writes atomically with a 0600 backup, narrows the mode to owner-only, and keeps other entries', async () => {
    const user = home();
    const path = join(user, '.cursor', 'mcp.json');
    mkdirSync(join(user, '.cursor'));
    const original = `${JSON.stringify({ mcpServers: { keep: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer sk-live-abcdefghijklmnopqrstuvwxyz' } } } }, null, 2)}\n`;
    writeFileSync(path, original, { mode: 0o640 });
    const preview = await previewClientConfig('cursor', options(user));
    expect(preview).toMatchObject({ path, created: false, changed: true, before: original });
    expect(preview.diff).toMatch(/^--- .*mcp\.json\n\+\+\+ .*mcp\.json\n@@ /);
    expect(preview.diff).toContain('+    "capnode": {');
    expect(preview.diff).not.toContain(TOKEN);
    expect(preview.diff).not.toContain('sk-live-abcdefghijklmnopqrstuvwxyz');
    const written = await writeClientConfig('cursor', { ...options(user), expected: preview.before, now: () => new Date('2026-12-01T10:00:00.000Z') });
    expect(written.backup).toBe(`${path}.capnode-backup-2026-12-01T10-00-00-000Z`);
    expect(readFileSync(written.backup!, 'utf8')).toBe(original);
    const after = JSON.parse(readFileSync(path, 'utf8'));
    expect(Object.keys(after.mcpServers)).toEqual(['keep', 'capnode']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(written.narrowedFrom).toBe(0o640);
    expect(statSync(written.backup!).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(user, '.cursor')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(await writeClientConfig('cursor', options(user))).toMatchObject({ changed: false });
  });

  it('creates a missing file 0600 without a backup, and writes through a symlink', async () => {
    const user = home();
    const created = await writeClientConfig('claude-desktop', options(user));
    expect(created.backup).toBeUndefined();
    expect(statSync(created.path).mode & 0o777).toBe(0o600);
    const real = join(user, 'dotfiles-claude.json');
    writeFileSync(real, '{"projects": {}}');
    symlinkSync(real, join(user, '.claude.json'));
    const written = await writeClientConfig('claude', options(user));
    expect(written.path).toBe(real);
    expect(JSON.parse(readFileSync(real, 'utf8')).projects).toEqual({});
  });

  it('refuses an unparseable file and a file changed since the preview; the file stays as it was', async () => {
    const user = home();
    const path = join(user, '.claude.json');
    writeFileSync(path, '{ not json');
    await expect(writeClientConfig('claude', options(user))).rejects.toMatchObject({ code: 'invalid_config' });
    expect(readFileSync(path, 'utf8')).toBe('{ not json');
    writeFileSync(path, '{}');
    const preview = await previewClientConfig('claude', options(user));
    writeFileSync(path, '{"changed": true}');
    await expect(writeClientConfig('claude', { ...options(user), expected: preview.before })).rejects.toMatchObject({ code: 'conflict' });
    expect(readFileSync(path, 'utf8')).toBe('{"changed": true}');
    expect(readdirSync(user).filter((name) => name.includes('capnode-backup'))).toEqual([]);
  });
});

describe('findClientConfigs / listClientTargets', () => {
  it('finds entries pointing at this host (URL or capnode mcp), an old token, and unreadable files', async () => {
    const user = home();
    writeFileSync(join(user, '.claude.json'), JSON.stringify({ mcpServers: { capnode: { type: 'http', url: 'http://localhost:8765', headers: { Authorization: 'Bearer old' } } } }));
    writeFileSync(join(user, '.mcp.json'), JSON.stringify({ mcpServers: { elsewhere: { url: 'http://127.0.0.1:9999/' } } }));
    mkdirSync(join(user, '.config', 'Claude'), { recursive: true });
    writeFileSync(join(user, '.config', 'Claude', 'claude_desktop_config.json'), JSON.stringify({ mcpServers: { c: { command: 'node', args: ['/x/node_modules/capnode/dist/bin.js', 'mcp'] } } }));
    mkdirSync(join(user, '.cursor'));
    writeFileSync(join(user, '.cursor', 'mcp.json'), '{oops');
    const files = await findClientConfigs({ ...options(user), url: 'http://127.0.0.1:8765/', token: TOKEN });
    const byPath = Object.fromEntries(files.map((file) => [file.path.slice(user.length + 1), file]));
    expect(byPath['.claude.json']!.entries).toEqual([{ name: 'capnode', pointsHere: true, url: 'http://localhost:8765', tokenCurrent: false }]);
    expect(byPath['.mcp.json']!.entries).toEqual([{ name: 'elsewhere', pointsHere: false, url: 'http://127.0.0.1:9999/' }]);
    expect(byPath['.config/Claude/claude_desktop_config.json']!.entries[0]!.pointsHere).toBe(true);
    expect(byPath['.cursor/mcp.json']!.state).toBe('unreadable');
    // The tray's own bin serves mcp too (a tray installed without the CLI); another program's bin.js does not count.
    for (const [script, here] of [
      ['/usr/lib/node_modules/@capnode/tray/dist/bin.js', true],
      ['/repo/apps/tray/dist/bin.js', true],
      ['/usr/lib/node_modules/other-tray/dist/bin.js', false],
    ] as const) {
      writeFileSync(join(user, '.config', 'Claude', 'claude_desktop_config.json'), JSON.stringify({ mcpServers: { c: { command: 'node', args: [script, 'mcp'] } } }));
      const found = await findClientConfigs({ ...options(user), url: 'http://127.0.0.1:8765/', token: TOKEN });
      expect(found.find((file) => file.path.endsWith('claude_desktop_config.json'))!.entries[0]!.pointsHere, script).toBe(here);
    }
    writeFileSync(join(user, '.config', 'Claude', 'claude_desktop_config.json'), JSON.stringify({ mcpServers: { c: { command: 'node', args: ['/x/node_modules/capnode/dist/bin.js', 'mcp'] } } }));
    const targets = await listClientTargets(options(user));
    expect(targets.map((target) => [target.id, target.configured])).toEqual([
      ['claude', true],
      ['claude-desktop', true],
      ['cursor', false],
      ['vscode', false],
    ]);
  });

  it('every call stops on an aborted signal before touching a file', async () => {
    const user = home();
    const signal = AbortSignal.abort();
    await expect(writeClientConfig('cursor', { ...options(user), signal })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(listClientTargets({ ...options(user), signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(readdirSync(user)).toEqual([]);
  });
});
