import { describe, expect, it } from 'vitest';
import { OutputRing, readRing } from './outputRing.js';

function ringOf(capacity: number, ...chunks: string[]): OutputRing {
  const ring = new OutputRing(capacity);
  for (const chunk of chunks) ring.push(Buffer.from(chunk, 'utf8'));
  return ring;
}

describe('OutputRing', () => {
  it('keeps the last capacity bytes across chunk boundaries, with absolute offsets', () => {
    const ring = ringOf(8, 'abc', 'defg', 'hijk');
    expect(ring.total).toBe(11);
    expect(ring.start).toBe(3);
    expect(ring.slice(3, 11).toString()).toBe('defghijk');
    expect(ring.slice(5, 9).toString()).toBe('fghi');
    ring.push(Buffer.from('0123456789'));
    expect(ring.start).toBe(13);
    expect(ring.slice(13, 21).toString()).toBe('23456789');
  });

  it('reads incrementally: nextCursor continues where the last read stopped', () => {
    const ring = ringOf(64, 'hello ');
    const first = readRing(ring, 0, 1024, false)!;
    expect(first).toMatchObject({ text: 'hello ', cursor: 0, nextCursor: 6, truncated: false, droppedBytes: 0, totalBytes: 6 });
    ring.push(Buffer.from('world'));
    expect(readRing(ring, first.nextCursor, 1024, false)).toMatchObject({ text: 'world', cursor: 6, nextCursor: 11 });
    expect(readRing(ring, 11, 1024, false)).toMatchObject({ text: '', nextCursor: 11, truncated: false });
  });

  it('a read cut at maxBytes is an exact prefix, truncated: true, and never splits a character', () => {
    const text = 'ab€€€cd'; // € is 3 bytes
    const ring = ringOf(64, text);
    const cut = readRing(ring, 0, 4, true)!;
    expect(cut).toMatchObject({ text: 'ab', nextCursor: 2, truncated: true });
    expect(text.startsWith(cut.text)).toBe(true);
    let cursor = 0;
    let joined = '';
    for (;;) {
      const read = readRing(ring, cursor, 4, true)!;
      joined += read.text;
      cursor = read.nextCursor;
      if (!read.truncated) break;
    }
    expect(joined).toBe(text);
  });

  it('leaves a character still being written for the next read, unless the stream ended', () => {
    const euro = Buffer.from('€');
    const ring = new OutputRing(64);
    ring.push(Buffer.concat([Buffer.from('x'), euro.subarray(0, 2)]));
    expect(readRing(ring, 0, 1024, false)).toMatchObject({ text: 'x', nextCursor: 1, truncated: false });
    ring.push(euro.subarray(2));
    expect(readRing(ring, 1, 1024, false)).toMatchObject({ text: '€', nextCursor: 4 });
    const ended = ringOf(64);
    ended.push(euro.subarray(0, 1));
    expect(readRing(ended, 0, 1024, true)).toMatchObject({ text: '\ufffd', nextCursor: 1 });
  });

  it('reports bytes dropped by the ring and starts at the oldest whole character', () => {
    const whole = ringOf(5, 'aa€bb'); // 7 bytes: the last 5 begin with €
    expect(whole.start).toBe(2);
    expect(readRing(whole, 0, 1024, true)).toMatchObject({ text: '€bb', cursor: 2, droppedBytes: 2 });
    const split = ringOf(4, 'aa€bb'); // the last 4 begin inside €
    expect(readRing(split, 0, 1024, true)).toMatchObject({ text: 'bb', cursor: 5, droppedBytes: 5 });
    const later = ringOf(4, 'abcdefgh');
    expect(readRing(later, 1, 1024, true)).toMatchObject({ text: 'efgh', cursor: 4, droppedBytes: 3 });
  });

  it('refuses a cursor beyond what was written', () => {
    expect(readRing(ringOf(8, 'abc'), 4, 16, false)).toBeUndefined();
    expect(readRing(ringOf(8, 'abc'), 3, 16, false)).toMatchObject({ text: '' });
  });
});
