import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCapabilityError } from '../../errors.js';
import { checkPattern, isLiteralPattern, runSearch, type SearchJob } from './fsSearch.js';

let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-search-')));
  mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
  mkdirSync(join(dir, 'build'));
  mkdirSync(join(dir, '.hidden'));
  mkdirSync(join(dir, 'secret'));
  writeFileSync(join(dir, 'src', 'a.ts'), 'const alpha = 1;\nconst beta = 2;\n// alpha again\n');
  writeFileSync(join(dir, 'src', 'deep', 'b.md'), 'intro\nalpha here\noutro\n');
  writeFileSync(join(dir, 'build', 'out.js'), 'alpha built\n');
  writeFileSync(join(dir, '.hidden', 'h.txt'), 'alpha hidden\n');
  writeFileSync(join(dir, 'secret', 'token'), 'alpha secret\n');
  writeFileSync(join(dir, 'bin.dat'), Buffer.from([0x61, 0x6c, 0x70, 0x68, 0x61, 0, 1, 2]));
  writeFileSync(join(dir, '.gitignore'), 'build/\n*.log\n');
  writeFileSync(join(dir, 'x.log'), 'alpha log\n');
  writeFileSync(join(dir, 'evil.txt'), `${'a'.repeat(40)}!\n`);
  symlinkSync('/etc', join(dir, 'etc-link'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function job(overrides: Partial<SearchJob>): Omit<SearchJob, 'claims' | 'chunkFiles'> {
  return {
    dir,
    pattern: 'alpha',
    literal: true,
    ignoreCase: false,
    include: [],
    exclude: [],
    hidden: false,
    gitignore: true,
    maxMatches: 100,
    contextLines: 0,
    maxFileBytes: 1 << 20,
    maxLineChars: 200,
    maxFiles: 1000,
    denied: [join(dir, 'secret')],
    globCaseInsensitive: false,
    ...overrides,
  };
}

const paths = (report: { matches: { path: string; line: number }[] }) => report.matches.map((match) => `${match.path.slice(dir.length + 1)}:${match.line}`);

describe('runSearch (worker)', () => {
  it('finds literal matches, honours .gitignore, skips hidden, binary, denied and symlinked entries', async () => {
    const report = await runSearch(job({}), { timeoutMs: 20_000 });
    expect(paths(report)).toEqual(['src/a.ts:1', 'src/a.ts:3', 'src/deep/b.md:2']);
    expect(report.filesSkipped).toBe(1);
    expect(report.truncated).toBe(false);
  });

  it('takes regular expressions, case folding, include/exclude globs, hidden and gitignore switches', async () => {
    expect(paths(await runSearch(job({ pattern: 'ALPHA\\s\\w+', literal: false, ignoreCase: true }), { timeoutMs: 20_000 }))).toEqual(['src/a.ts:3', 'src/deep/b.md:2']);
    expect(paths(await runSearch(job({ pattern: 'ALPHA (', literal: true, ignoreCase: true }), { timeoutMs: 20_000 }))).toEqual([]);
    expect(paths(await runSearch(job({ pattern: 'ALPHA', ignoreCase: true }), { timeoutMs: 20_000 }))).toEqual(['src/a.ts:1', 'src/a.ts:3', 'src/deep/b.md:2']);
    expect(paths(await runSearch(job({ include: ['*.md'] }), { timeoutMs: 20_000 }))).toEqual(['src/deep/b.md:2']);
    expect(paths(await runSearch(job({ exclude: ['deep'] }), { timeoutMs: 20_000 }))).toEqual(['src/a.ts:1', 'src/a.ts:3']);
    const all = paths(await runSearch(job({ hidden: true, gitignore: false }), { timeoutMs: 20_000 }));
    expect(all).toEqual(expect.arrayContaining(['.hidden/h.txt:1', 'build/out.js:1', 'x.log:1']));
    expect(all.some((entry) => entry.startsWith('secret/'))).toBe(false);
  });

  it('gives the same matches in the same order from one worker or several (each searching the chunks of files it claims)', async () => {
    const one = await runSearch(job({ pattern: 'a', maxMatches: 1000 }), { timeoutMs: 20_000, shards: 1 });
    for (const shards of [2, 3]) {
      for (const chunkFiles of [1, 2, 32]) {
        const many = await runSearch(job({ pattern: 'a', maxMatches: 1000 }), { timeoutMs: 20_000, shards, chunkFiles });
        expect(paths(many)).toEqual(paths(one));
        expect(many.filesSearched).toBe(one.filesSearched);
      }
    }
    const cut = await runSearch(job({ pattern: 'a', maxMatches: 2 }), { timeoutMs: 20_000, shards: 3, chunkFiles: 1 });
    expect(paths(cut)).toEqual(paths(one).slice(0, 2));
    expect(cut.truncated).toBe(true);
    expect(cut.matches.every((match) => !('key' in match))).toBe(true);
  });

  it('opens at most maxFiles files in all, however many workers search', async () => {
    const all = await runSearch(job({ pattern: 'a', maxMatches: 1000 }), { timeoutMs: 20_000, shards: 1 });
    const bounded = await runSearch(job({ pattern: 'a', maxMatches: 1000, maxFiles: 2 }), { timeoutMs: 20_000, shards: 3, chunkFiles: 1 });
    expect(bounded.filesSearched + bounded.filesSkipped).toBe(2);
    expect(bounded.truncated).toBe(true);
    expect(paths(bounded)).toEqual(paths(all).filter((entry) => paths(bounded).includes(entry)));
  });

  it('bounds the matches (truncated) and gives context lines', async () => {
    const report = await runSearch(job({ maxMatches: 2, contextLines: 1 }), { timeoutMs: 20_000 });
    expect(report.matches).toHaveLength(2);
    expect(report.truncated).toBe(true);
    expect(report.matches[1]).toMatchObject({ line: 3, text: '// alpha again', before: ['const beta = 2;'], after: [] });
    expect(report.matches[0]).toMatchObject({ column: 7, before: [], after: ['const beta = 2;'] });
  });

  it('stops a catastrophic regular expression at the deadline (timeout) while the host thread stays free', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const started = performance.now();
    try {
      await runSearch(job({ pattern: '^(a+)+$', literal: false }), { timeoutMs: 500 });
      throw new Error('expected a timeout');
    } catch (error) {
      expect(isCapabilityError(error) && error.code).toBe('timeout');
    } finally {
      clearInterval(timer);
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(ticks).toBeGreaterThan(5);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const running = runSearch(job({ pattern: '^(a+)+$', literal: false }), { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('patterns', () => {
  it('tells literals from regular expressions and refuses invalid ones', () => {
    expect(isLiteralPattern('hello world')).toBe(true);
    expect(isLiteralPattern('a.b')).toBe(false);
    expect(() => checkPattern('(unclosed', false)).toThrow(/not a valid regular expression/);
  });
});
