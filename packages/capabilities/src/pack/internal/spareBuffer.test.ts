import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpareBuffer } from './spareBuffer.js';

describe('SpareBuffer', () => {
  afterEach(() => vi.useRealTimers());

  it('hands the returned buffer to the next user, never to two users at once', () => {
    const spares = new SpareBuffer(1_000);
    const first = spares.take(100);
    const second = spares.take(100);
    expect(second).not.toBe(first);
    spares.give(first);
    expect(spares.take(50)).toBe(first);
    expect(spares.take(50)).not.toBe(first);
  });

  it('gives a new buffer when the spare is too small, and keeps the larger one', () => {
    const spares = new SpareBuffer(1_000);
    const small = spares.take(10);
    spares.give(small);
    const large = spares.take(1_000);
    expect(large).not.toBe(small);
    expect(large.length).toBeGreaterThanOrEqual(1_000);
    spares.give(large);
    spares.give(small);
    expect(spares.take(1_000)).toBe(large);
  });

  it('drops the spare after idleMs without use', () => {
    vi.useFakeTimers();
    const spares = new SpareBuffer(1_000);
    spares.give(spares.take(10));
    vi.advanceTimersByTime(999);
    expect(spares.holding).toBe(true);
    vi.advanceTimersByTime(1);
    expect(spares.holding).toBe(false);
  });

  it('counts idleMs from the last give', () => {
    vi.useFakeTimers();
    const spares = new SpareBuffer(1_000);
    spares.give(spares.take(10));
    vi.advanceTimersByTime(600);
    spares.give(spares.take(10));
    vi.advanceTimersByTime(999);
    expect(spares.holding).toBe(true);
    vi.advanceTimersByTime(1);
    expect(spares.holding).toBe(false);
    spares.give(spares.take(10));
    vi.advanceTimersByTime(999);
    expect(spares.holding).toBe(true);
    vi.advanceTimersByTime(1);
    expect(spares.holding).toBe(false);
  });
});
