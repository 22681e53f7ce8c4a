import { describe, expect, it } from 'vitest';
import { diffLines, unifiedDiff } from './lineDiff.js';

/** Applies ops to check they turn `before` into `after`. */
function apply(ops: ReturnType<typeof diffLines>): { before: string[]; after: string[] } {
  return { before: ops.filter((op) => op.kind !== '+').map((op) => op.line), after: ops.filter((op) => op.kind !== '-').map((op) => op.line) };
}

describe('diffLines', () => {
  it('finds a shortest edit script that turns one list into the other', () => {
    const cases: [string, string][] = [
      ['abcabba', 'cbabac'],
      ['', 'abc'],
      ['abc', ''],
      ['abc', 'abc'],
      ['axbxc', 'aybyc'],
    ];
    for (const [a, b] of cases) {
      const ops = diffLines([...a], [...b]);
      expect(apply(ops)).toEqual({ before: [...a], after: [...b] });
    }
    expect(diffLines([...'abcabba'], [...'cbabac']).filter((op) => op.kind !== ' ')).toHaveLength(5);
  });

  it('falls back to removed-then-added when the edit distance is huge, still correct', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`);
    expect(apply(diffLines(a, b))).toEqual({ before: a, after: b });
  });
});

describe('unifiedDiff', () => {
  it('writes hunks with three lines of context and line numbers', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 10\n', 'line ten\n');
    expect(unifiedDiff(before, after, { path: 'f.txt' })).toBe(
      ['--- a/f.txt', '+++ b/f.txt', '@@ -7,7 +7,7 @@', ' line 7', ' line 8', ' line 9', '-line 10', '+line ten', ' line 11', ' line 12', ' line 13', ''].join('\n'),
    );
  });

  it('shows a new file as all added, and says when a file ends without a newline', () => {
    expect(unifiedDiff('', 'a\nb', { path: 'n' })).toBe('--- a/n\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of new file\n');
    expect(unifiedDiff('same\n', 'same\n', { path: 'n' })).toBe('');
  });

  it('keeps separate hunks apart and merges close ones', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `l${i + 1}`);
    const after = [...lines];
    after[2] = 'X';
    after[35] = 'Y';
    const diff = unifiedDiff(`${lines.join('\n')}\n`, `${after.join('\n')}\n`, { path: 'p' });
    expect(diff.match(/^@@/gm)).toHaveLength(2);
    const close = [...lines];
    close[10] = 'X';
    close[14] = 'Y';
    expect(unifiedDiff(`${lines.join('\n')}\n`, `${close.join('\n')}\n`, { path: 'p' }).match(/^@@/gm)).toHaveLength(1);
  });
});
