import { describe, expect, it } from 'vitest';
import { createCompletionRing } from './completionRing.js';

describe('createCompletionRing', () => {
  const setup = (capacity: number) => {
    const clock = { time: 0 };
    return { clock, ring: createCompletionRing({ ttl: 100, capacity, now: () => clock.time }) };
  };

  it('remembers a completion for its time to live', () => {
    const { clock, ring } = setup(4);
    ring.record('a');
    clock.time = 99;
    expect(ring.has('a')).toBe(true);
    expect(ring.has('b')).toBe(false);
    clock.time = 100;
    expect(ring.has('a')).toBe(false);
    expect(ring.size).toBe(0);
  });

  it('keeps the newest completions when it wraps, and counts distinct keys', () => {
    const { clock, ring } = setup(3);
    for (const key of ['a', 'b', 'c', 'd', 'd']) {
      ring.record(key);
      clock.time += 1;
    }
    expect(['a', 'b', 'c', 'd'].map((key) => ring.has(key))).toEqual([false, false, true, true]);
    expect(ring.size).toBe(2);
  });

  it('finds a key recorded again after an older record of it expired', () => {
    const { clock, ring } = setup(8);
    ring.record('a');
    clock.time = 150;
    ring.record('b');
    ring.record('a');
    expect(ring.has('a')).toBe(true);
    clock.time = 249;
    expect(ring.has('a')).toBe(true);
    expect(ring.size).toBe(2);
  });
});
