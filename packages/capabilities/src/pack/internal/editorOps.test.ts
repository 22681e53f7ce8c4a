import { describe, expect, it } from 'vitest';
import { isCapabilityError } from '../../errors.js';
import { MAX_UNDO_PER_FILE } from './editorLimits.js';
import { createUndoHistory, insertAfter, numberLines, occurrenceLines, replaceOnce, sha256 } from './editorOps.js';

function failure(run: () => unknown): { code: string; message: string; data: Record<string, unknown> | undefined } {
  try {
    run();
  } catch (error) {
    if (isCapabilityError(error)) return { code: error.code, message: error.message, data: error.data };
    throw error;
  }
  throw new Error('expected a failure');
}

describe('replaceOnce', () => {
  it('replaces exactly one occurrence and says on which line it was', () => {
    expect(replaceOnce('a\nb\nc\n', 'b', 'B', 'f')).toEqual({ text: 'a\nB\nc\n', line: 2 });
    expect(replaceOnce('x = 1\n', 'x = 1\n', '', 'f').text).toBe('');
  });

  it('refuses 0 and several matches, naming how many (and where)', () => {
    expect(failure(() => replaceOnce('abc', 'zz', 'y', 'f'))).toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('found 0 times'), data: { matches: 0 } });
    expect(failure(() => replaceOnce('ab\nab\n', 'ab', 'y', 'f'))).toMatchObject({ message: expect.stringContaining('found 2 times in f (lines 1, 2)'), data: { matches: 2, lines: [1, 2] } });
    expect(failure(() => replaceOnce('aaa', 'a', 'y', 'f')).data).toMatchObject({ matches: 3 });
    expect(failure(() => replaceOnce('abc', '', 'y', 'f')).data).toMatchObject({ reason: 'empty_old_str' });
  });

  it('counts non-overlapping occurrences', () => {
    expect(occurrenceLines('aaaa', 'aa')).toEqual([1, 1]);
  });
});

describe('insertAfter', () => {
  it('inserts after a line, at the top with 0, at the end after the last line', () => {
    expect(insertAfter('a\nb\n', 1, 'x')).toBe('a\nx\nb\n');
    expect(insertAfter('a\nb\n', 0, 'x\n')).toBe('x\na\nb\n');
    expect(insertAfter('a\nb\n', 2, 'x')).toBe('a\nb\nx\n');
    expect(insertAfter('a\nb', 2, 'x')).toBe('a\nb\nx\n');
    expect(insertAfter('', 0, 'x')).toBe('x\n');
  });

  it('refuses a line past the end, naming the file length', () => {
    expect(failure(() => insertAfter('a\nb\n', 3, 'x'))).toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('has 2 lines') });
  });
});

describe('numberLines', () => {
  it('numbers lines as cat -n does, within a range', () => {
    expect(numberLines('a\nb\nc\n', 2, 3)).toBe('     2\tb\n     3\tc');
    expect(numberLines('a\nb', 1)).toBe('     1\ta\n     2\tb');
  });
});

describe('undo history', () => {
  it('keeps at most MAX_UNDO_PER_FILE edits per file, newest on top', () => {
    const history = createUndoHistory();
    for (let index = 0; index < MAX_UNDO_PER_FILE + 5; index++) history.record('/f', `v${index}`, `v${index + 1}`);
    let count = 0;
    let top = history.peek('/f');
    expect(top).toEqual({ before: `v${MAX_UNDO_PER_FILE + 4}`, afterHash: sha256(`v${MAX_UNDO_PER_FILE + 5}`) });
    while ((top = history.pop('/f'))) count++;
    expect(count).toBe(MAX_UNDO_PER_FILE);
    expect(history.peek('/f')).toBeUndefined();
  });

  it('keeps at most 64 files, dropping the least recently edited', () => {
    const history = createUndoHistory();
    for (let index = 0; index < 70; index++) history.record(`/f${index}`, 'a', 'b');
    expect(history.peek('/f0')).toBeUndefined();
    expect(history.peek('/f69')).toBeDefined();
  });
});
