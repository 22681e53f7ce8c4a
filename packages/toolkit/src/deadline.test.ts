import { describe, expect, it } from 'vitest';
import { armDeadline, createDeadline, delay, isTimeoutError, waitFor } from './deadline.js';

describe('createDeadline', () => {
  it('aborts at the deadline with a TimeoutError, and reports it', async () => {
    const deadline = createDeadline({ timeoutMs: 20 });
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve));
    expect(deadline.timedOut).toBe(true);
    expect(isTimeoutError(deadline.signal.reason)).toBe(true);
  });

  it('follows the parent signal and detaches from it on clear', () => {
    const parent = new AbortController();
    const deadline = createDeadline({ timeoutMs: 60_000, signal: parent.signal });
    parent.abort('stop');
    expect(deadline.signal.reason).toBe('stop');
    expect(deadline.timedOut).toBe(false);

    const other = new AbortController();
    const cleared = createDeadline({ timeoutMs: 10, signal: other.signal });
    cleared.clear();
    other.abort('late');
    expect(cleared.signal.aborted).toBe(false);
  });

  it('starts aborted under an aborted parent and rejects a negative timeout', () => {
    expect(createDeadline({ signal: AbortSignal.abort('x') }).signal.reason).toBe('x');
    expect(() => createDeadline({ timeoutMs: -1 })).toThrow(RangeError);
  });
});

describe('waitFor', () => {
  it('resolves with the work and leaves no timer behind', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(await waitFor(Promise.resolve(7), { timeoutMs: 60_000 })).toBe(7);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });

  it('rejects at the deadline and hands the signal to a function', async () => {
    let seen: AbortSignal | undefined;
    const waiting = waitFor((signal) => {
      seen = signal;
      return new Promise<never>(() => {});
    }, { timeoutMs: 20, timeoutReason: () => new Error('too slow') });
    await expect(waiting).rejects.toThrow('too slow');
    expect(seen?.aborted).toBe(true);
  });

  it('rejects at once on abort with the reason', async () => {
    const controller = new AbortController();
    const waiting = waitFor(new Promise<never>(() => {}), { signal: controller.signal });
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    await expect(waitFor(Promise.resolve(1), { signal: AbortSignal.abort(new Error('gone')) })).rejects.toThrow('gone');
  });

  it('an unref timer does not hold the process open, and still fires', async () => {
    const deadline = createDeadline({ timeoutMs: 20, unref: true });
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve, { once: true }));
    expect(deadline.timedOut).toBe(true);
  });
});

describe('armDeadline', () => {
  it('calls back once at the deadline with the timeout reason, or with the signal reason', async () => {
    const ends: [unknown, boolean][] = [];
    const timer = armDeadline({ timeoutMs: 10, timeoutReason: () => 'late' }, (reason, timedOut) => ends.push([reason, timedOut]));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(ends).toEqual([['late', true]]);
    expect(timer.timedOut).toBe(true);

    const parent = new AbortController();
    const cancelled: [unknown, boolean][] = [];
    const second = armDeadline({ timeoutMs: 60_000, signal: parent.signal }, (reason, timedOut) => cancelled.push([reason, timedOut]));
    parent.abort('stop');
    parent.abort('again');
    expect(cancelled).toEqual([['stop', false]]);
    expect(second.timedOut).toBe(false);
  });

  it('calls back at once under an aborted signal, and never after clear', async () => {
    const ends: unknown[] = [];
    armDeadline({ timeoutMs: 10, signal: AbortSignal.abort('early') }, (reason) => ends.push(reason));
    expect(ends).toEqual(['early']);
    const parent = new AbortController();
    const timer = armDeadline({ timeoutMs: 5, signal: parent.signal }, (reason) => ends.push(reason));
    timer.clear();
    parent.abort('late');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ends).toEqual(['early']);
  });
});

describe('delay', () => {
  it('resolves after the time', async () => {
    const started = performance.now();
    await delay(15);
    expect(performance.now() - started).toBeGreaterThanOrEqual(10);
  });

  it('rejects with the signal reason when aborted, at once when already aborted', async () => {
    await expect(delay(10, { signal: AbortSignal.abort('before') })).rejects.toBe('before');
    const controller = new AbortController();
    const waiting = delay(60_000, { signal: controller.signal, unref: true });
    controller.abort('stop');
    await expect(waiting).rejects.toBe('stop');
  });
});
