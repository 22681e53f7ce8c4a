import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, runCli, tempHome } from './helpers.js';
import { eventually } from '../support/poll.js';

/** util-linux `script` runs a command on a pseudo-terminal: the confirmation question is only asked on one. */
const SCRIPT = '/usr/bin/script';

/** Runs `capnode config <args>` on a terminal, answers the question with `answer`, returns exit code and output. */
async function onTerminal(args: readonly string[], env: Record<string, string>, answer: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, cliPath, 'config', ...args].map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn(SCRIPT, ['-qec', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: 'pipe' });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  await eventually(() => output.includes('? [y/N]'), { what: 'the confirmation question', timeoutMs: 20_000, intervalMs: 50 });
  child.stdin.write(`${answer}\n`);
  child.stdin.end();
  return { code: await closed, output };
}

/** The value of the client token `name` in the config directory's `mcp-tokens.json`. */
function clientToken(home: string, name: string): string {
  const store = JSON.parse(readFileSync(join(home, 'mcp-tokens.json'), 'utf8')) as { tokens: Array<{ name: string; token: string }> };
  const entry = store.tokens.find((token) => token.name === name);
  if (entry === undefined) throw new Error(`no token '${name}' in ${home}/mcp-tokens.json`);
  return entry.token;
}

describe('capnode config <client> --write', () => {
  it('shows the masked diff, keeps a backup and every other entry, and is idempotent', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home, XDG_CONFIG_HOME: join(user.home, '.config') };
    const path = join(user.home, '.claude.json');
    const original = {
      numStartups: 12,
      projects: { '/work/x': { allowedTools: [] } },
      mcpServers: { github: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789' } } },
    };
    writeFileSync(path, `${JSON.stringify(original, null, 2)}\n`, { mode: 0o600 });

    const result = await runCli(['config', 'claude', '--write', '--yes'], dir.home, env);
    expect(result.code).toBe(0);
    // Claude Code gets a token of its own, named after it: its calls carry `claude` in audit and approvals.
    const token = clientToken(dir.home, 'claude');
    expect(result.stdout).not.toContain(readFileSync(join(dir.home, 'mcp-token'), 'utf8').trim());
    expect(result.stdout).toContain(`--- ${path}\n+++ ${path}\n@@ `);
    expect(result.stdout).toMatch(/^\+ {4}"capnode": \{$/m);
    expect(result.stdout).not.toContain(token);
    expect(result.stdout).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    expect(result.stdout).toMatch(/wrote .*\.claude\.json \(previous file kept as .*\.claude\.json\.capnode-backup-\d{4}-\d\d-\d\dT[\d-]+Z\)/);

    const written = JSON.parse(readFileSync(path, 'utf8'));
    expect(written.numStartups).toBe(12);
    expect(written.projects).toEqual(original.projects);
    expect(written.mcpServers.github).toEqual(original.mcpServers.github);
    expect(written.mcpServers.capnode).toMatchObject({ type: 'http', headers: { Authorization: `Bearer ${token}` } });
    const backups = readdirSync(user.home).filter((name) => name.startsWith('.claude.json.capnode-backup-'));
    expect(backups).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(user.home, backups[0]!), 'utf8'))).toEqual(original);

    const again = await runCli(['config', 'claude', '--write', '--yes'], dir.home, env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already has this entry; nothing to do');
    expect(readdirSync(user.home).filter((name) => name.includes('capnode-backup'))).toHaveLength(1);
  });

  it('a world-readable .claude.json becomes 0600 with the minted claude token; the token is reused and listed, never shown', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home, XDG_CONFIG_HOME: join(user.home, '.config') };
    const path = join(user.home, '.claude.json');
    writeFileSync(path, '{"numStartups": 3}\n');
    chmodSync(path, 0o644);
    const result = await runCli(['config', 'claude', '--write', '--yes'], dir.home, env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("made the MCP token 'claude'");
    expect(result.stdout).toContain('readable by you only (it was mode 0644)');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const token = clientToken(dir.home, 'claude');
    expect(JSON.parse(readFileSync(path, 'utf8')).mcpServers.capnode.headers.Authorization).toBe(`Bearer ${token}`);
    expect(statSync(join(dir.home, 'mcp-tokens.json')).mode & 0o777).toBe(0o600);

    // Reused, not made again: printing the snippet names the same token.
    const printed = await runCli(['config', 'claude', '--json'], dir.home, env);
    expect(printed.stderr).not.toContain('made the MCP token');
    expect(printed.stdout).toContain(token);
    const listed = await runCli(['token', 'list'], dir.home);
    expect(listed.stdout).toMatch(/^claude +\d{4}-/m);
    expect(listed.stdout).not.toContain(token);
    // doctor takes the client's own token as current (not "an old token").
    const doctor = JSON.parse((await runCli(['doctor', '--json'], dir.home, env)).stdout) as { checks: Array<{ id: string; status: string; detail: string }> };
    const claude = doctor.checks.find((check) => check.id === 'client:claude');
    expect(claude?.detail ?? '').not.toContain('old token');
    expect(claude?.status).toBe('ok');
  });

  it('writes VS Code and Claude Desktop files that do not exist yet; --json reports path and backup', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home, XDG_CONFIG_HOME: join(user.home, '.config') };
    const vscode = JSON.parse((await runCli(['config', 'vscode', '--write', '--yes', '--json'], dir.home, env)).stdout) as { path: string; changed: boolean; backup?: string };
    expect(vscode).toMatchObject({ path: join(user.home, '.config', 'Code', 'User', 'mcp.json'), changed: true });
    expect(vscode.backup).toBeUndefined();
    const file = JSON.parse(readFileSync(vscode.path, 'utf8'));
    expect(file.servers.capnode.headers.Authorization).toBe('Bearer ${input:capnode-token}');
    expect(file.inputs).toHaveLength(1);

    const desktop = await runCli(['config', 'claude-desktop', '--write', '--yes', '--name', 'laptop'], dir.home, env);
    expect(desktop.code).toBe(0);
    const config = JSON.parse(readFileSync(join(user.home, '.config', 'Claude', 'claude_desktop_config.json'), 'utf8'));
    expect(config.mcpServers.laptop).toMatchObject({ command: process.execPath, args: [expect.stringMatching(/bin\.js$/), 'mcp'], env: { CAPNODE_HOME: dir.home } });
  });

  it('refuses a file it cannot parse and leaves it untouched; without --yes off a terminal it writes nothing', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home };
    mkdirSync(join(user.home, '.cursor'));
    const path = join(user.home, '.cursor', 'mcp.json');
    const broken = '{\n  // my servers\n  "mcpServers": {}\n}\n';
    writeFileSync(path, broken);
    const refused = await runCli(['config', 'cursor', '--write', '--yes'], dir.home, env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`capnode: cannot parse ${path}`);
    expect(refused.stderr).toContain('it was not changed');
    expect(readFileSync(path, 'utf8')).toBe(broken);
    expect(readdirSync(join(user.home, '.cursor'))).toEqual(['mcp.json']);

    writeFileSync(path, '{"mcpServers": {"keep": {"url": "http://x/"}}}');
    const unconfirmed = await runCli(['config', 'cursor', '--write'], dir.home, env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stdout).toContain('+    "capnode": {');
    expect(unconfirmed.stderr).toContain('without confirmation: run this on a terminal, or add --yes');
    expect(readFileSync(path, 'utf8')).toBe('{"mcpServers": {"keep": {"url": "http://x/"}}}');

    const misplaced = await runCli(['config', 'cursor', '--yes'], dir.home, env);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--yes applies to --write only');
  });

  it('refuses a --name no client takes as it is (empty, control characters, spaces, __, a leading _ or $), writing nothing', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home };
    const printed = ['', 'x\ny', ' capnode', 'a b', 'a__b', '${input:x}', 'a}b', 'x'.repeat(65)].map((name) => ['config', 'cursor', '--name', name]);
    const written = ['__proto__', 'x\ny'].map((name) => ['config', 'vscode', '--write', '--yes', '--name', name]);
    for (const args of [...printed, ...written]) {
      const result = await runCli(args, dir.home, env);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain('--name must be 1-64 letters, digits');
      expect(result.stdout).toBe('');
    }
    expect(readdirSync(user.home)).toEqual([]);
    expect(existsSync(join(dir.home, 'mcp-token'))).toBe(false);
    const fine = await runCli(['config', 'cursor', '--write', '--yes', '--name', 'work-laptop.2'], dir.home, env);
    expect(fine.code, fine.stderr).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(join(user.home, '.cursor', 'mcp.json'), 'utf8')).mcpServers)).toEqual(['work-laptop.2']);
  });

  it.skipIf(!existsSync(SCRIPT))('asks on a terminal: anything but y writes nothing, y writes', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { CAPNODE_HOME: dir.home, HOME: user.home };
    const path = join(user.home, '.cursor', 'mcp.json');
    const declined = await onTerminal(['cursor', '--write'], env, 'n');
    expect(declined.code).toBe(1);
    expect(declined.output).toContain(`create ${path}? [y/N]`);
    expect(declined.output).toContain('nothing written');
    expect(existsSync(path)).toBe(false);
    const accepted = await onTerminal(['cursor', '--write'], env, 'y');
    expect(accepted.code).toBe(0);
    expect(accepted.output).toContain(`wrote ${path}`);
    expect(JSON.parse(readFileSync(path, 'utf8')).mcpServers.capnode.url).toMatch(/^http:\/\/127\.0\.0\.1:8765\/\?toolNames=underscore$/);
  });

  it('picks the tool name style each client accepts and writes it as the entry\'s selector; --tool-names overrides; another value is refused', async () => {
    using dir = tempHome();
    using user = tempHome();
    const env = { HOME: user.home, XDG_CONFIG_HOME: join(user.home, '.config') };
    const cursor = JSON.parse((await runCli(['config', 'cursor', '--json'], dir.home, env)).stdout) as { mcpServers: { capnode: { url: string } } };
    expect(cursor.mcpServers.capnode.url).toBe('http://127.0.0.1:8765/?toolNames=underscore');
    const claude = JSON.parse((await runCli(['config', 'claude', '--json'], dir.home, env)).stdout) as { mcpServers: { capnode: { url: string } } };
    expect(claude.mcpServers.capnode.url).toBe('http://127.0.0.1:8765/');
    const desktop = await runCli(['config', 'claude-desktop', '--write', '--yes', '--tool-names', 'underscore'], dir.home, env);
    expect(desktop.code, desktop.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(user.home, '.config', 'Claude', 'claude_desktop_config.json'), 'utf8'));
    expect(config.mcpServers.capnode.args.slice(1)).toEqual(['mcp', '--tool-names', 'underscore']);
    const bad = await runCli(['config', 'cursor', '--tool-names', 'snake'], dir.home, env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--tool-names must be 'dotted' (system.run) or 'underscore' (system_run)");
  });
});
