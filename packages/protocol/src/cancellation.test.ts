import { describe, expect, it } from 'vitest';
import { createCancellationTracker, type CancellationTrackerOptions } from './cancellation.js';
import { requestIdKey, requestIdKeyFromMessage } from './requestId.js';

function setup(options: Omit<CancellationTrackerOptions, 'now'> = {}) {
  const clock = { time: 1_000 };
  const tracker = createCancellationTracker({ ...options, now: () => clock.time });
  return { tracker, clock };
}

const key = (id: string | number) => requestIdKey(id);

describe('createCancellationTracker: active calls', () => {
  it('cancels the one active call that matches, with the given reason', () => {
    const { tracker } = setup();
    const call = tracker.register(key(1));
    const other = tracker.register(key(2));
    expect(call.cancelledEarly).toBe(false);
    expect(call.signal.aborted).toBe(false);

    expect(tracker.cancel(key(1), 'user requested')).toBe('cancelled');
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe('user requested');
    expect(other.signal.aborted).toBe(false);
  });

  it('aborts with an AbortError when no reason is given', () => {
    const { tracker } = setup();
    const call = tracker.register(key('a'));
    tracker.cancel(key('a'));
    expect((call.signal.reason as Error).name).toBe('AbortError');
  });

  it('delivers a cancellation that happened before the signal was first read', () => {
    const { tracker } = setup();
    const call = tracker.register(key(2));
    expect(tracker.cancel(key(2), 'early reason')).toBe('cancelled');
    expect(tracker.cancel(key(2), 'later reason')).toBe('cancelled');
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe('early reason');
    expect(call.signal).toBe(call.signal);
  });

  it('does not cross-cancel duplicate active ids', () => {
    const { tracker } = setup();
    const first = tracker.register(key(7));
    const second = tracker.register(key(7));
    expect(tracker.cancel(key(7))).toBe('ambiguous');
    expect(first.signal.aborted).toBe(false);
    expect(second.signal.aborted).toBe(false);
    expect(tracker.stats()).toEqual({ active: 2, tombstones: 0, recentCompletions: 0 });

    first.complete();
    expect(tracker.cancel(key(7))).toBe('cancelled');
    expect(second.signal.aborted).toBe(true);
  });

  it('stays ambiguous until a single call is left among three that share an id', () => {
    const { tracker } = setup();
    const calls = [tracker.register(key('x')), tracker.register(key('x')), tracker.register(key('x'))];
    calls[0]?.complete();
    expect(tracker.cancel(key('x'))).toBe('ambiguous');
    calls[2]?.complete();
    expect(tracker.cancel(key('x'), 'stop')).toBe('cancelled');
    expect(calls[1]?.signal.reason).toBe('stop');
    expect(tracker.stats().active).toBe(1);
  });

  it('keeps a pending cancellation for one id while other ids register and complete', () => {
    const { tracker, clock } = setup();
    expect(tracker.cancel(key(9), 'early')).toBe('pending');
    for (let id = 0; id < 5; id++) tracker.register(key(id)).complete();
    clock.time += 100;
    expect(tracker.register(key(9)).cancelledEarly).toBe(true);
    expect(tracker.register(key(10)).cancelledEarly).toBe(false);
  });

  it("aborts one call for the transport's own reason without touching others that share its key", () => {
    const { tracker } = setup();
    const first = tracker.register(key(9));
    const second = tracker.register(key(9));
    first.abort('deadline');
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBe('deadline');
    expect(second.signal.aborted).toBe(false);
    expect(tracker.stats().active).toBe(2);
  });

  it('keeps string and numeric ids apart, and matches equivalent spellings', () => {
    const { tracker } = setup();
    const numeric = tracker.register(requestIdKeyFromMessage(1, '{"id":1}'));
    const text = '{"method":"notifications/cancelled","params":{"requestId":"1"}}';
    expect(tracker.cancel(requestIdKeyFromMessage('1', text, 'params.requestId'))).toBe('pending');
    expect(numeric.signal.aborted).toBe(false);
    expect(tracker.cancel(requestIdKeyFromMessage(1, '{"params":{"requestId":10E-1}}', 'params.requestId'))).toBe('cancelled');
    expect(numeric.signal.aborted).toBe(true);

    const big = '123456789012345678901234567890';
    const bigId = JSON.parse(big) as number;
    const exact = tracker.register(requestIdKeyFromMessage(bigId, `{"id":${big}}`));
    expect(tracker.cancel(requestIdKeyFromMessage(bigId, `{"params":{"requestId":123456789012345678901234567891}}`, 'params.requestId'))).toBe(
      'pending',
    );
    expect(exact.signal.aborted).toBe(false);
  });

  it('completes idempotently and through using', () => {
    const { tracker } = setup();
    {
      using call = tracker.register(key(3));
      expect(call.key).toBe(key(3));
      expect(tracker.stats().active).toBe(1);
    }
    expect(tracker.stats()).toEqual({ active: 0, tombstones: 0, recentCompletions: 1 });
    const again = tracker.register(key(3));
    const twin = tracker.register(key(3));
    again.complete();
    again.complete();
    expect(tracker.stats().active).toBe(1);
    twin.complete();
    expect(tracker.stats().active).toBe(0);
  });

  it('treats an unknown request id as harmless', () => {
    const { tracker } = setup();
    const call = tracker.register(key(1));
    expect(tracker.cancel(key(99))).toBe('pending');
    expect(call.signal.aborted).toBe(false);
  });
});

describe('createCancellationTracker: tombstones', () => {
  it('cancels a call whose cancellation arrived before it registered, consuming the tombstone once', () => {
    const { tracker, clock } = setup();
    expect(tracker.cancel(key(5), 'too slow')).toBe('pending');
    expect(tracker.stats().tombstones).toBe(1);
    clock.time += 100;

    const call = tracker.register(key(5));
    expect(call.cancelledEarly).toBe(true);
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe('too slow');
    expect(tracker.stats().tombstones).toBe(0);

    const next = tracker.register(key(5));
    expect(next.cancelledEarly).toBe(false);
    expect(next.signal.aborted).toBe(false);
  });

  it('expires a tombstone 5 s after the notification', () => {
    const { tracker, clock } = setup();
    tracker.cancel(key('a'));
    tracker.cancel(key('b'));
    clock.time += 4_999;
    expect(tracker.register(key('a')).cancelledEarly).toBe(true);
    clock.time += 1;
    expect(tracker.register(key('b')).cancelledEarly).toBe(false);
    expect(tracker.stats().tombstones).toBe(0);
  });

  it('does not extend a tombstone when the notification repeats', () => {
    const { tracker, clock } = setup();
    expect(tracker.cancel(key(1), 'first')).toBe('pending');
    clock.time += 3_000;
    expect(tracker.cancel(key(1), 'second')).toBe('pending');
    clock.time += 1_999;
    const early = tracker.register(key(1));
    expect(early.signal.reason).toBe('first');

    const { tracker: other, clock: otherClock } = setup();
    other.cancel(key(1));
    otherClock.time += 3_000;
    other.cancel(key(1));
    otherClock.time += 2_000;
    expect(other.register(key(1)).cancelledEarly).toBe(false);
  });

  it('starts a fresh lifetime for a notification after the old tombstone expired', () => {
    const { tracker, clock } = setup();
    tracker.cancel(key(1));
    clock.time += 5_000;
    expect(tracker.cancel(key(1))).toBe('pending');
    clock.time += 4_999;
    expect(tracker.register(key(1)).cancelledEarly).toBe(true);
  });

  it('honours a custom lifetime', () => {
    const { tracker, clock } = setup({ tombstoneTtlMs: 50 });
    tracker.cancel(key(1));
    clock.time += 50;
    expect(tracker.register(key(1)).cancelledEarly).toBe(false);
  });
});

describe('createCancellationTracker: a registration as a signal', () => {
  it('reports aborted and reason and calls abort listeners once, without creating a signal', () => {
    const tracker = createCancellationTracker();
    const call = tracker.register(requestIdKey(40));
    const heard: unknown[] = [];
    const kept = () => heard.push(['kept', call.reason]);
    const removed = () => heard.push('removed');
    call.addEventListener('abort', kept, { once: true });
    call.addEventListener('abort', removed);
    call.removeEventListener('abort', removed);
    expect(call.aborted).toBe(false);
    expect(tracker.cancel(requestIdKey(40), 'user')).toBe('cancelled');
    expect(call.aborted).toBe(true);
    expect(call.reason).toBe('user');
    call.abort('again');
    expect(heard).toEqual([['kept', 'user']]);
    const late = () => heard.push('late');
    call.addEventListener('abort', late);
    expect(heard).toHaveLength(1);
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe('user');
  });

  it('starts aborted when a tombstone was waiting for it', () => {
    const tracker = createCancellationTracker();
    tracker.cancel(requestIdKey('early'), 'first');
    const call = tracker.register(requestIdKey('early'));
    expect(call.cancelledEarly).toBe(true);
    expect(call.aborted).toBe(true);
    expect(call.reason).toBe('first');
  });
});

describe('createCancellationTracker: recent completions', () => {
  it('keeps a late cancellation from poisoning an immediate reuse of the id', () => {
    const { tracker, clock } = setup();
    tracker.register(key(9)).complete();
    clock.time += 10;
    expect(tracker.cancel(key(9))).toBe('ignored');
    expect(tracker.stats().tombstones).toBe(0);
    const reuse = tracker.register(key(9));
    expect(reuse.cancelledEarly).toBe(false);
    expect(reuse.signal.aborted).toBe(false);
  });

  it('still cancels a reused id that is active', () => {
    const { tracker } = setup();
    tracker.register(key(9)).complete();
    const reuse = tracker.register(key(9));
    expect(tracker.cancel(key(9))).toBe('cancelled');
    expect(reuse.signal.aborted).toBe(true);
  });

  it('guards an early-cancelled call against repeated notifications too', () => {
    const { tracker } = setup();
    tracker.cancel(key(4));
    tracker.register(key(4)).complete();
    expect(tracker.cancel(key(4))).toBe('ignored');
    expect(tracker.register(key(4)).cancelledEarly).toBe(false);
  });

  it('expires the guard 5 s after completion, refreshed by a later completion', () => {
    const { tracker, clock } = setup();
    tracker.register(key(1)).complete();
    clock.time += 4_000;
    tracker.register(key(1)).complete();
    clock.time += 4_999;
    expect(tracker.cancel(key(1))).toBe('ignored');
    clock.time += 1;
    expect(tracker.cancel(key(1))).toBe('pending');
  });
});

describe('createCancellationTracker: capacity', () => {
  it('caps tombstones at 1024, evicting the oldest', () => {
    const { tracker, clock } = setup();
    for (let id = 0; id < 1024; id += 1) {
      tracker.cancel(key(id));
      clock.time += 1;
    }
    expect(tracker.stats().tombstones).toBe(1024);
    tracker.cancel(key(1024));
    expect(tracker.stats().tombstones).toBe(1024);
    expect(tracker.register(key(0)).cancelledEarly).toBe(false);
    expect(tracker.register(key(1)).cancelledEarly).toBe(true);
    expect(tracker.register(key(1024)).cancelledEarly).toBe(true);
  });

  it('prunes expired tombstones before evicting a live one', () => {
    const { tracker, clock } = setup();
    for (let id = 0; id < 10; id += 1) tracker.cancel(key(id));
    clock.time += 3_000;
    for (let id = 10; id < 1024; id += 1) tracker.cancel(key(id));
    clock.time += 2_000;
    tracker.cancel(key('new'));
    expect(tracker.stats().tombstones).toBe(1015);
    for (let id = 10; id < 1024; id += 1) expect(tracker.register(key(id)).cancelledEarly).toBe(true);
    expect(tracker.register(key('new')).cancelledEarly).toBe(true);
  });

  it('caps recent completions at 1024, evicting the oldest', () => {
    const { tracker, clock } = setup();
    for (let id = 0; id < 1025; id += 1) {
      tracker.register(key(id)).complete();
      clock.time += 1;
    }
    expect(tracker.stats().recentCompletions).toBe(1024);
    expect(tracker.cancel(key(0))).toBe('pending');
    expect(tracker.cancel(key(1))).toBe('ignored');
    expect(tracker.cancel(key(1024))).toBe('ignored');
  });

  it('prunes expired recent completions before evicting a live one', () => {
    const { tracker, clock } = setup();
    for (let id = 0; id < 10; id += 1) tracker.register(key(id)).complete();
    clock.time += 3_000;
    for (let id = 10; id < 1024; id += 1) tracker.register(key(id)).complete();
    clock.time += 2_000;
    tracker.register(key('new')).complete();
    expect(tracker.stats().recentCompletions).toBe(1015);
    for (let id = 10; id < 1024; id += 1) expect(tracker.cancel(key(id))).toBe('ignored');
    expect(tracker.cancel(key('new'))).toBe('ignored');
  });

  it('honours custom caps', () => {
    const { tracker } = setup({ maxTombstones: 2, maxRecentCompletions: 1 });
    tracker.cancel(key(1));
    tracker.cancel(key(2));
    tracker.cancel(key(3));
    expect(tracker.stats().tombstones).toBe(2);
    tracker.register(key('a')).complete();
    tracker.register(key('b')).complete();
    expect(tracker.cancel(key('a'))).toBe('pending');
    expect(tracker.cancel(key('b'))).toBe('ignored');
  });
});

describe('createCancellationTracker: options', () => {
  it('rejects nonsensical limits', () => {
    expect(() => createCancellationTracker({ maxTombstones: 0 })).toThrow(/maxTombstones must be an integer >= 1/);
    expect(() => createCancellationTracker({ maxRecentCompletions: 1.5 })).toThrow(RangeError);
    expect(() => createCancellationTracker({ tombstoneTtlMs: -1 })).toThrow(/tombstoneTtlMs/);
    expect(() => createCancellationTracker({ recentCompletionTtlMs: Number.NaN })).toThrow(/recentCompletionTtlMs/);
  });

  it('works with the default monotonic clock', () => {
    const tracker = createCancellationTracker();
    expect(tracker.cancel(key(1))).toBe('pending');
    expect(tracker.register(key(1)).cancelledEarly).toBe(true);
  });
});
