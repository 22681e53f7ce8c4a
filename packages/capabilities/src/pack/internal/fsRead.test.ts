import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { looksLikeText, readLineRange, utf8Boundary } from './fsRead.js';

const dir = mkdtempSync(join(tmpdir(), 'capnode-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function range(content: string | Buffer, start: number, end: number | undefined, maxBytes = 1 << 20) {
  const file = join(dir, `f${Math.random()}`);
  writeFileSync(file, content);
  const handle = await open(file, 'r');
  try {
    return await readLineRange(handle, start, end, maxBytes);
  } finally {
    await handle.close();
  }
}

describe('utf8Boundary', () => {
  it('never ends inside a character', () => {
    const data = Buffer.from('aé€😀', 'utf8');
    for (let end = 0; end <= data.length; end++) {
      const cut = utf8Boundary(data, end);
      expect(data.toString('utf8').startsWith(data.subarray(0, cut).toString('utf8'))).toBe(true);
      expect(end - cut).toBeLessThan(4);
    }
    expect(utf8Boundary(data)).toBe(data.length);
  });
});

describe('looksLikeText', () => {
  it('tells text from binary: a NUL or invalid UTF-8 is binary; a character cut at the end is text', () => {
    expect(looksLikeText(Buffer.from('plain\n'))).toBe(true);
    expect(looksLikeText(Buffer.from([0x61, 0, 0x62]))).toBe(false);
    expect(looksLikeText(Buffer.from([0xff, 0xfe, 0x41]))).toBe(false);
    expect(looksLikeText(Buffer.from('é€', 'utf8').subarray(0, 3))).toBe(true);
  });
});

describe('readLineRange', () => {
  it('returns the lines asked for, and the total when it read to the end', async () => {
    expect(await range('one\ntwo\nthree\n', 2, 3)).toMatchObject({ text: 'two\nthree\n', startLine: 2, endLine: 3, truncated: false });
    expect(await range('one\ntwo\nthree', 2, undefined)).toMatchObject({ text: 'two\nthree', endLine: 3, totalLines: 3 });
    expect(await range('one\ntwo\n', 5, 9)).toMatchObject({ text: '', endLine: 4, totalLines: 2 });
    expect(await range('', 1, undefined)).toMatchObject({ text: '', totalLines: 0 });
  });

  it('reads lines that cross its chunks', async () => {
    const lines = Array.from({ length: 5000 }, (_, index) => `line ${index + 1} ${'x'.repeat(index % 97)}`);
    const read = await range(`${lines.join('\n')}\n`, 4000, 4002);
    expect(read.text).toBe(`${lines.slice(3999, 4002).join('\n')}\n`);
  });

  it('cuts at maxBytes on a character boundary: an exact prefix of the range, marked truncated', async () => {
    const read = await range('aaa\n€€€€\nbbb\n', 2, 3, 5);
    expect(read).toMatchObject({ truncated: true, endLine: 2 });
    expect('€€€€\nbbb\n'.startsWith(read.text)).toBe(true);
    expect(read.text).toBe('€');
  });
});
