// Attacks on `capnode token add|revoke <name>` and on a tampered mcp-tokens.json: each is a clear
// error (or a pinned, defined behaviour), never a crash, and nothing already stored is lost.
import { chmodSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostPaths, listClientTokens, readClientToken } from '@capnode/host/setup';
import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../cli/helpers.js';

const store = (home: string) => join(home, 'mcp-tokens.json');
const TOKEN = 'A'.repeat(43);

describe('capnode token add|revoke: hostile names', () => {
  it.each([
    ['a/b'],
    ['../x'],
    ['..'],
    ['a\nb'],
    ['a\u0007b'],
    ['a\u0000b'.replace('\u0000', '\u001b')],
    [''],
    ['x'.repeat(65)],
    ['x'.repeat(200)],
    ['.hidden'],
    ['-flag'],
    ['na me'],
  ])('add %j is a usage error (exit 2) and writes nothing', { timeout: 30_000 }, async (name) => {
    using temp = tempHome();
    const result = await runCli(['token', 'add', name], temp.home);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    // A leading '-' is read as an option before the name check.
    expect(result.stderr).toMatch(/token name is 1-64|usage: capnode token add|unknown option -flag/);
    expect(() => readFileSync(store(temp.home))).toThrow();
    const revoke = await runCli(['token', 'revoke', name], temp.home);
    expect(revoke.code, revoke.stderr).toBe(2);
  });

  it('64 characters is the longest name; `default` cannot be added twice nor revoked; case variants are distinct tokens', { timeout: 60_000 }, async () => {
    using temp = tempHome();
    const long = 'x'.repeat(64);
    expect((await runCli(['token', 'add', long], temp.home)).code).toBe(0);
    const first = await runCli(['token', 'add', 'default'], temp.home);
    expect(first.code, first.stderr).toBe(0);
    const again = await runCli(['token', 'add', 'default'], temp.home);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("a token named 'default' already exists");
    const revokeDefault = await runCli(['token', 'revoke', 'default'], temp.home);
    expect(revokeDefault.code).toBe(2);
    expect(revokeDefault.stderr).toContain("the 'default' token cannot be revoked");
    // Names are case-sensitive: `Claude` and `claude` are two tokens; revoking one keeps the other.
    const upper = await runCli(['token', 'add', 'Claude'], temp.home);
    const lower = await runCli(['token', 'add', 'claude'], temp.home);
    expect([upper.code, lower.code]).toEqual([0, 0]);
    expect(upper.stdout.trim()).not.toBe(lower.stdout.trim());
    expect((await runCli(['token', 'add', 'claude'], temp.home)).code).not.toBe(0);
    expect((await runCli(['token', 'revoke', 'CLAUDE'], temp.home)).code).toBe(1);
    expect((await runCli(['token', 'revoke', 'Claude'], temp.home)).code).toBe(0);
    const paths = hostPaths(temp.home);
    expect(readClientToken(paths, 'claude')).toBe(lower.stdout.trim());
    expect(readClientToken(paths, 'Claude')).toBeUndefined();
    expect(listClientTokens(paths).map((entry) => entry.name)).toEqual(['default', long, 'claude']);
  });
});

describe('a tampered mcp-tokens.json', () => {
  function tamper(home: string, text: string, mode = 0o600): void {
    writeFileSync(store(home), text, { mode });
    chmodSync(store(home), mode);
  }

  it('not JSON, or without a tokens list: add and revoke fail clearly and leave the file as it was', { timeout: 60_000 }, async () => {
    using temp = tempHome();
    for (const text of ['{not json', '[]', '{"tokens": 3}']) {
      tamper(temp.home, text);
      const add = await runCli(['token', 'add', 'x'], temp.home);
      expect(add.code, add.stderr).toBe(1);
      expect(add.stdout).toBe('');
      expect(add.stderr).toMatch(/is not valid JSON|has no "tokens" list/);
      const revoke = await runCli(['token', 'revoke', 'x'], temp.home);
      expect(revoke.code, revoke.stderr).not.toBe(0);
      expect(revoke.stderr).toMatch(/is not valid JSON|has no "tokens" list/);
      expect(readFileSync(store(temp.home), 'utf8')).toBe(text);
    }
  });

  it('group/world readable (0644) or a symlink: refused, file untouched', { timeout: 60_000 }, async () => {
    using temp = tempHome();
    const text = JSON.stringify({ version: 1, tokens: [{ name: 'a', token: TOKEN, created: '2026-01-01T00:00:00.000Z' }] });
    tamper(temp.home, text, 0o644);
    const add = await runCli(['token', 'add', 'x'], temp.home);
    expect(add.code).not.toBe(0);
    expect(add.stdout).toBe('');
    expect(() => readClientToken(hostPaths(temp.home), 'a')).toThrow();
    expect(readFileSync(store(temp.home), 'utf8')).toBe(text);

    using other = tempHome();
    const target = join(other.home, 'elsewhere.json');
    writeFileSync(target, text, { mode: 0o600 });
    rmSync(store(temp.home));
    symlinkSync(target, store(temp.home));
    const viaLink = await runCli(['token', 'add', 'x'], temp.home);
    expect(viaLink.code).not.toBe(0);
    expect(viaLink.stdout).toBe('');
    expect(readFileSync(target, 'utf8')).toBe(text);
  });

  it('duplicate names: the first is the one read, the others are named in warnings (token list, doctor); revoke removes every copy', { timeout: 60_000 }, async () => {
    using temp = tempHome();
    const created = '2026-01-01T00:00:00.000Z';
    tamper(temp.home, JSON.stringify({ version: 1, tokens: [{ name: 'a', token: TOKEN, created }, { name: 'a', token: 'B'.repeat(43), created }, { name: 'b', token: 'C'.repeat(43), created }, { name: 'default', token: 'D'.repeat(43), created }] }));
    const paths = hostPaths(temp.home);
    expect(readClientToken(paths, 'a')).toBe(TOKEN);
    const listed = await runCli(['token', 'list'], temp.home);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toMatch(/WARNING: .*mcp-tokens\.json: entry 2 \("a"\) repeats the name of entry 1; only the first entry of a name is accepted/);
    expect(listed.stderr).toMatch(/WARNING: .*mcp-tokens\.json: entry 4 \("default"\) is named 'default'/);
    const json = JSON.parse((await runCli(['token', 'list', '--json'], temp.home)).stdout) as { tokens: Array<{ name: string }>; warnings: string[] };
    expect(json.tokens.map((token) => token.name)).toEqual(['a', 'b']);
    expect(json.warnings).toHaveLength(2);
    const doctor = await runCli(['doctor', '--json'], temp.home, { HOME: temp.home });
    expect(doctor.stdout).toMatch(/entry 2 \(\\"a\\"\) repeats the name of entry 1/);
    for (const output of [listed.stdout, listed.stderr, JSON.stringify(json), doctor.stdout]) {
      expect(output).not.toContain('B'.repeat(43));
      expect(output).not.toContain('D'.repeat(43));
    }
    const revoke = await runCli(['token', 'revoke', 'a'], temp.home);
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(readClientToken(paths, 'a')).toBeUndefined();
    expect(readClientToken(paths, 'b')).toBe('C'.repeat(43));
  });

  it('a short (weak) token in the file is never accepted: a clear error, and the file is left as it was', { timeout: 30_000 }, async () => {
    using temp = tempHome();
    const text = JSON.stringify({ version: 1, tokens: [{ name: 'strong', token: TOKEN, created: '2026-01-01T00:00:00.000Z' }, { name: 'weak', token: 'x', created: '2026-01-01T00:00:00.000Z' }] });
    tamper(temp.home, text);
    expect(() => readClientToken(hostPaths(temp.home), 'weak')).toThrow(/"weak" is shorter than 32/);
    const add = await runCli(['token', 'add', 'x'], temp.home);
    expect(add.code).toBe(1);
    expect(add.stderr).toMatch(/"weak" is shorter than 32/);
    expect(readFileSync(store(temp.home), 'utf8')).toBe(text);
  });

  it('a short hand-written mcp-token is refused like a short named token; capnode token rotate replaces it', { timeout: 60_000 }, async () => {
    using temp = tempHome();
    writeFileSync(join(temp.home, 'mcp-token'), 'hand-written-but-too-short\n', { mode: 0o600 });
    const list = await runCli(['token', 'list'], temp.home);
    expect(list.code).toBe(1);
    expect(list.stderr).toMatch(/mcp-token: the token is shorter than 32 characters, too weak to accept; replace it with a strong one: capnode token rotate/);
    expect(list.stderr).not.toContain('hand-written-but-too-short');
    const rotate = await runCli(['token', 'rotate'], temp.home);
    expect(rotate.code, rotate.stderr).toBe(0);
    expect(readFileSync(join(temp.home, 'mcp-token'), 'utf8').trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await runCli(['token', 'list'], temp.home)).code).toBe(0);
  });
});
