import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles from 1 s to a 30 s cap', () => {
    const delays = Array.from({ length: 8 }, (_, attempt) => backoffDelay(attempt, {}, () => 0));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(backoffDelay(1_000, {}, () => 0)).toBe(30_000);
  });

  it('takes up to 20 % off at random, never exceeding the cap', () => {
    expect(backoffDelay(0, {}, () => 1)).toBe(800);
    expect(backoffDelay(10, {}, () => 1)).toBe(24_000);
    for (let i = 0; i < 200; i += 1) {
      const delay = backoffDelay(i % 12, {});
      expect(delay).toBeGreaterThanOrEqual(800);
      expect(delay).toBeLessThanOrEqual(30_000);
    }
  });

  it('accepts other bounds and clamps nonsense', () => {
    expect(backoffDelay(3, { initialMs: 100, maxMs: 500, jitter: 0 })).toBe(500);
    expect(backoffDelay(-5, { initialMs: 100, jitter: 0 })).toBe(100);
    expect(backoffDelay(0, { initialMs: 100, jitter: 5 }, () => 1)).toBe(0);
  });
});
