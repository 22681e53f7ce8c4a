import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { addClientToken, createTokenUsageRecorder, listClientTokens, readAcceptedTokens, readClientToken, revokeClientToken } from './clientTokens.js';
import { hostPaths, type HostPaths } from './paths.js';

const CREATED = '2026-01-01T00:00:00.000Z';
const SECRET = (letter: string) => letter.repeat(43);

function tempHome(): { paths: HostPaths; [Symbol.dispose](): void } {
  const home = mkdtempSync(join(tmpdir(), 'capnode-tokens-'));
  return { paths: hostPaths(home), [Symbol.dispose]: () => rmSync(home, { recursive: true, force: true }) };
}

function writeStore(paths: HostPaths, tokens: unknown[]): string {
  const text = JSON.stringify({ version: 1, tokens });
  writeFileSync(join(paths.home, 'mcp-tokens.json'), text, { mode: 0o600 });
  return text;
}

describe('mcp-tokens.json: refused entries are reported, never silently dropped', () => {
  test('each bad entry is named (position and name, never its token) and not accepted; the good ones are', () => {
    using home = tempHome();
    writeStore(home.paths, [
      { name: 'good', token: SECRET('A'), created: CREATED },
      'not an object',
      { name: 'bad name!', token: SECRET('B'), created: CREATED },
      { name: 'notoken', created: CREATED },
      { name: 'nocreated', token: SECRET('C') },
    ]);
    const warnings: string[] = [];
    const accepted = readAcceptedTokens(home.paths, { onWarning: (message) => warnings.push(message) });
    expect(accepted.map((entry) => entry.name)).toEqual(['good']);
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toMatch(/entry 2 \(no name\) is not an object; it is not accepted/);
    expect(warnings[1]).toMatch(/entry 3 \("bad name!"\) has no valid name/);
    expect(warnings[2]).toMatch(/entry 4 \("notoken"\) has no token/);
    expect(warnings[3]).toMatch(/entry 5 \("nocreated"\) has no "created" time/);
    for (const warning of warnings) for (const letter of 'ABC') expect(warning).not.toContain(SECRET(letter));
    const listed: string[] = [];
    expect(listClientTokens(home.paths, { onWarning: (message) => listed.push(message) }).map((info) => info.name)).toEqual(['good']);
    expect(listed).toEqual(warnings);
  });

  test("a repeated name: the first entry keeps it, every later one is refused with a warning; an entry named 'default' is refused", () => {
    using home = tempHome();
    writeFileSync(home.paths.mcpToken, `${SECRET('D')}\n`, { mode: 0o600 });
    writeStore(home.paths, [
      { name: 'a', token: SECRET('A'), created: CREATED },
      { name: 'default', token: SECRET('X'), created: CREATED },
      { name: 'a', token: SECRET('B'), created: CREATED },
      { name: 'a', token: SECRET('C'), created: CREATED },
    ]);
    const warnings: string[] = [];
    const accepted = readAcceptedTokens(home.paths, { onWarning: (message) => warnings.push(message) });
    expect(accepted).toEqual([
      { name: 'default', token: SECRET('D') },
      { name: 'a', token: SECRET('A') },
    ]);
    expect(readClientToken(home.paths, 'a')).toBe(SECRET('A'));
    expect(readClientToken(home.paths, 'default')).toBe(SECRET('D'));
    expect(warnings).toEqual([
      expect.stringMatching(/entry 2 \("default"\) is named 'default', the name of the mcp-token file's token; rename it/),
      expect.stringMatching(/entry 3 \("a"\) repeats the name of entry 1; only the first entry of a name is accepted/),
      expect.stringMatching(/entry 4 \("a"\) repeats the name of entry 1/),
    ]);
  });

  test('adding a token keeps every entry of the file as it was, refused ones too; revoke removes every entry of its name', async () => {
    using home = tempHome();
    const bad = { name: 'bad name!', token: SECRET('B'), created: CREATED };
    writeStore(home.paths, [bad, { name: 'a', token: SECRET('A'), created: CREATED }, { name: 'a', token: SECRET('C'), created: CREATED }]);
    await addClientToken(home.paths, 'fresh');
    const stored = (JSON.parse(readFileSync(join(home.paths.home, 'mcp-tokens.json'), 'utf8')) as { tokens: Array<{ name: string }> }).tokens;
    expect(stored.map((entry) => entry.name)).toEqual(['bad name!', 'a', 'a', 'fresh']);
    expect(await revokeClientToken(home.paths, 'a')).toBe(true);
    const after = (JSON.parse(readFileSync(join(home.paths.home, 'mcp-tokens.json'), 'utf8')) as { tokens: Array<{ name: string }> }).tokens;
    expect(after.map((entry) => entry.name)).toEqual(['bad name!', 'fresh']);
  });
});

describe('mcp-token (the default token): the same minimum length as named tokens', () => {
  test('a hand-written token shorter than 32 characters is refused, naming the file and the fix', () => {
    using home = tempHome();
    writeFileSync(home.paths.mcpToken, 'short-secret-31-characters-long\n', { mode: 0o600 });
    expect(() => readAcceptedTokens(home.paths)).toThrow(/mcp-token: the token is shorter than 32 characters, too weak to accept; replace it with a strong one: capnode token rotate/);
    expect(() => listClientTokens(home.paths)).toThrow(/shorter than 32/);
  });

  test('32 characters, and the 43 capnode makes, are accepted', () => {
    using home = tempHome();
    writeFileSync(home.paths.mcpToken, `${'k'.repeat(32)}\n`, { mode: 0o600 });
    expect(readAcceptedTokens(home.paths)).toEqual([{ name: 'default', token: 'k'.repeat(32) }]);
    writeFileSync(home.paths.mcpToken, `${SECRET('G')}\n`, { mode: 0o600 });
    expect(readAcceptedTokens(home.paths)).toEqual([{ name: 'default', token: SECRET('G') }]);
  });
});

describe('last use', () => {
  afterEach(() => vi.useRealTimers());

  test('is recorded exactly (to the millisecond), the latest use written within a minute', async () => {
    using home = tempHome();
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(new Date('2026-03-04T05:06:07.891Z'));
    const recorder = createTokenUsageRecorder(home.paths, (message) => expect.fail(message));
    const record = (name: string) => recorder.record(name);
    const usage = () => {
      try {
        return (JSON.parse(readFileSync(join(home.paths.home, 'mcp-tokens-used.json'), 'utf8')) as Record<string, string>).a;
      } catch {
        return undefined;
      }
    };
    record('a');
    await vi.waitFor(() => expect(usage()).toBe('2026-03-04T05:06:07.891Z'));
    vi.setSystemTime(new Date('2026-03-04T05:06:30.123Z'));
    record('a');
    vi.setSystemTime(new Date('2026-03-04T05:06:45.456Z'));
    record('a');
    expect(usage()).toBe('2026-03-04T05:06:07.891Z');
    await vi.advanceTimersByTimeAsync(60_000);
    await vi.waitFor(() => expect(usage()).toBe('2026-03-04T05:06:45.456Z'));
  });

  test('close writes a use still waiting for its minute, and nothing is written after it', async () => {
    using home = tempHome();
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(new Date('2026-03-04T05:06:07.891Z'));
    const recorder = createTokenUsageRecorder(home.paths, (message) => expect.fail(message));
    const usagePath = join(home.paths.home, 'mcp-tokens-used.json');
    recorder.record('a');
    await vi.waitFor(() => expect(existsSync(usagePath)).toBe(true));
    vi.setSystemTime(new Date('2026-03-04T05:06:30.123Z'));
    recorder.record('a');
    await recorder.close();
    expect(JSON.parse(readFileSync(usagePath, 'utf8'))).toEqual({ a: '2026-03-04T05:06:30.123Z' });
    rmSync(home.paths.home, { recursive: true, force: true });
    recorder.record('a');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(existsSync(home.paths.home)).toBe(false);
  });
});
