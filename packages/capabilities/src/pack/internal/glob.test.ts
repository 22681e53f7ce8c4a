import { describe, expect, it } from 'vitest';
import { createGlobMatcher } from './glob.js';

const matches = (glob: string, path: string, caseInsensitive = false) => createGlobMatcher(glob, caseInsensitive)!(path);

describe('createGlobMatcher', () => {
  it('matches a name at any depth when the glob has no slash, as .gitignore does', () => {
    expect(matches('*.ts', 'a.ts')).toBe(true);
    expect(matches('*.ts', 'src/deep/a.ts')).toBe(true);
    expect(matches('*.ts', 'a.tsx')).toBe(false);
    expect(matches('node_modules', 'x/node_modules')).toBe(true);
  });

  it('anchors globs with a slash; `**` spans directories, `*` and `?` stay in one name', () => {
    expect(matches('src/*.ts', 'src/a.ts')).toBe(true);
    expect(matches('src/*.ts', 'src/x/a.ts')).toBe(false);
    expect(matches('src/**/*.ts', 'src/x/y/a.ts')).toBe(true);
    expect(matches('src/**/*.ts', 'src/a.ts')).toBe(true);
    expect(matches('/build', 'build')).toBe(true);
    expect(matches('/build', 'x/build')).toBe(false);
    expect(matches('a?c', 'abc')).toBe(true);
    expect(matches('a?c', 'a/c')).toBe(false);
  });

  it('takes classes, negated classes, ranges and brace alternatives', () => {
    expect(matches('[ab].txt', 'b.txt')).toBe(true);
    expect(matches('[!ab].txt', 'b.txt')).toBe(false);
    expect(matches('file[0-9]', 'file7')).toBe(true);
    expect(matches('*.{js,ts}', 'x.ts')).toBe(true);
    expect(matches('*.{js,ts}', 'x.md')).toBe(false);
    expect(matches('{a,b{c,d}}', 'bd')).toBe(true);
  });

  it('folds case only when asked (case-insensitive filesystems)', () => {
    expect(matches('*.TS', 'a.ts')).toBe(false);
    expect(matches('*.TS', 'a.ts', true)).toBe(true);
  });

  it('refuses globs that are too long or expand to too many alternatives', () => {
    expect(createGlobMatcher('a'.repeat(1001), false)).toBeUndefined();
    expect(createGlobMatcher('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}', false)).toBeUndefined();
    expect(createGlobMatcher('', false)).toBeUndefined();
  });

  it('stays fast on hostile globs (no backtracking blow-up)', () => {
    const glob = `${'*a'.repeat(100)}b`;
    const name = 'a'.repeat(250);
    const started = performance.now();
    expect(matches(glob, name)).toBe(false);
    expect(matches('**/'.repeat(50) + 'x', `${'d/'.repeat(200)}y`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('works from its own source text (as the search worker runs it)', () => {
    const rebuilt = new Function(`return (${createGlobMatcher.toString()})`)() as typeof createGlobMatcher;
    expect(rebuilt('src/**/*.{ts,md}', false)!('src/a/b.md')).toBe(true);
  });
});
