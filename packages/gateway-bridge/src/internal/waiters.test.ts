import { describe, expect, it } from 'vitest';
import { createWaiterSet, waitUntilSettled, type Settler } from './waiters.js';

const errors = { timeoutError: () => new Error('timed out'), abortError: () => new Error('aborted') };

describe('waitUntilSettled', () => {
  it('ends with timeoutError at the deadline and abortError on the signal, forgetting the settler either way', async () => {
    const held = new Set<Settler<string>>();
    const register = (settler: Settler<string>) => {
      held.add(settler);
      return () => held.delete(settler);
    };
    await expect(waitUntilSettled({ ...errors, timeoutMs: 20 }, register)).rejects.toThrow('timed out');
    const controller = new AbortController();
    const aborted = waitUntilSettled({ ...errors, signal: controller.signal }, register);
    expect(held.size).toBe(1);
    controller.abort();
    await expect(aborted).rejects.toThrow('aborted');
    expect(held.size).toBe(0);
    // An already aborted signal never registers.
    await expect(waitUntilSettled({ ...errors, signal: AbortSignal.abort() }, register)).rejects.toThrow('aborted');
    expect(held.size).toBe(0);
  });

  it('the first settlement wins; one made while registering still forgets the settler', async () => {
    const held = new Set<Settler<string>>();
    const settled = waitUntilSettled<string>({ ...errors, timeoutMs: 60_000 }, (settler) => {
      held.add(settler);
      settler.resolve('now');
      settler.reject(new Error('late'));
      return () => held.delete(settler);
    });
    await expect(settled).resolves.toBe('now');
    expect(held.size).toBe(0);
  });
});

describe('createWaiterSet', () => {
  it('settles every current wait at once; later waits wait for the next settlement', async () => {
    const set = createWaiterSet<number>();
    const first = [set.wait(errors), set.wait(errors)];
    set.resolveAll(1);
    await expect(Promise.all(first)).resolves.toEqual([1, 1]);
    const next = set.wait(errors);
    set.rejectAll(new Error('stopped'));
    await expect(next).rejects.toThrow('stopped');
  });
});
