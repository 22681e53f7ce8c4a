import { describe, expect, it, vi } from 'vitest';
import { armListedTimer, clearListedTimer, type ListedTimer, type TimerList } from './timerLists.js';

class Entry implements ListedTimer {
  timerDue = -1;
  timerPrev: ListedTimer | undefined = undefined;
  timerNext: ListedTimer | undefined = undefined;
  timerList: TimerList | undefined = undefined;
  timerFallback: ReturnType<typeof setTimeout> | undefined = undefined;
  firedAt: number | undefined;
  constructor(readonly onFire?: () => void) {}
  onTimer(): void {
    this.firedAt = performance.now();
    this.onFire?.();
  }
}

const refedTimers = (): number => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const fired = (...entries: Entry[]): Promise<void> => vi.waitFor(() => expect(entries.every((entry) => entry.firedAt !== undefined)).toBe(true), { timeout: 10_000 });

describe('listed timers', () => {
  it('fire no earlier than their delay, in the order they were armed', async () => {
    const start = performance.now();
    const first = new Entry();
    const second = new Entry();
    armListedTimer(first, 30, true);
    await sleep(5);
    armListedTimer(second, 30, true);
    await fired(first, second);
    expect(first.firedAt! - start).toBeGreaterThanOrEqual(30);
    expect(second.firedAt! - first.firedAt!).toBeGreaterThanOrEqual(0);
    expect(second.firedAt! - start).toBeGreaterThanOrEqual(35);
    expect(first.timerList).toBeUndefined();
  });

  it('do not fire once cleared, whichever place they hold in their list', async () => {
    const entries = [new Entry(), new Entry(), new Entry()];
    for (const entry of entries) armListedTimer(entry, 20, true);
    clearListedTimer(entries[1]!);
    clearListedTimer(entries[0]!);
    clearListedTimer(entries[0]!);
    // The last entry fires after the earlier ones would have: same duration, armed later.
    await fired(entries[2]!);
    expect(entries.map((entry) => entry.firedAt !== undefined)).toEqual([false, false, true]);
  });

  it('re-arm from the new arming, and let an entry arm again from its own callback', async () => {
    let count = 0;
    const entry: Entry = new Entry(() => {
      count += 1;
      if (count < 3) armListedTimer(entry, 10, true);
    });
    armListedTimer(entry, 10, true);
    armListedTimer(entry, 10, true);
    await vi.waitFor(() => expect(count).toBe(3), { timeout: 10_000 });
    await sleep(30);
    expect(count).toBe(3);
  });

  it('keep firing the rest of a list when one callback throws', async () => {
    const thrown: unknown[] = [];
    const onError = (error: unknown): void => void thrown.push(error);
    process.on('uncaughtException', onError);
    try {
      const failing = new Entry(() => {
        throw new Error('boom');
      });
      const after = new Entry();
      armListedTimer(failing, 15, true);
      armListedTimer(after, 15, true);
      await fired(failing, after);
      expect(thrown).toHaveLength(1);
    } finally {
      process.off('uncaughtException', onError);
    }
  });

  it('hold the process open only while a kept-alive list has an entry', async () => {
    const before = refedTimers();
    const entry = new Entry();
    armListedTimer(entry, 60_000, false);
    expect(refedTimers()).toBe(before + 1);
    clearListedTimer(entry);
    expect(refedTimers()).toBe(before);
    armListedTimer(entry, 60_000, false);
    expect(refedTimers()).toBe(before + 1);
    clearListedTimer(entry);
    const unrefed = new Entry();
    armListedTimer(unrefed, 60_000, true);
    expect(refedTimers()).toBe(before);
    clearListedTimer(unrefed);
  });

  it('give durations beyond the kept lists a plain timer, which fires and clears alike', async () => {
    const many = Array.from({ length: 70 }, () => new Entry());
    // Distinct durations fill every list slot; each list stays armed, so none can be dropped.
    many.forEach((entry, index) => armListedTimer(entry, 30 + index, true));
    const plain = many.filter((entry) => entry.timerFallback !== undefined);
    expect(plain.length).toBeGreaterThan(1);
    expect(plain.every((entry) => entry.timerList === undefined)).toBe(true);
    const cleared = plain[0]!;
    clearListedTimer(cleared);
    expect(cleared.timerFallback).toBeUndefined();
    // Every other entry firing means the cleared one's time passed too (the last has the longest delay).
    await fired(...many.filter((entry) => entry !== cleared));
    expect(cleared.firedAt).toBeUndefined();
  });
});
