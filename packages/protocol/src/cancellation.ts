import { createExpiringMap } from './internal/expiringMap.js';
import type { RequestIdKey } from './requestId.js';

/** Options of {@link createCancellationTracker}. Durations are in milliseconds of `now`. */
export interface CancellationTrackerOptions {
  /** How long a cancellation that matched no active call waits for its call to register. Default 5000. */
  tombstoneTtlMs?: number;
  /** At most this many pending cancellations are kept. Default 1024. */
  maxTombstones?: number;
  /** How long a completed id stays protected from late cancellations. Default 5000. */
  recentCompletionTtlMs?: number;
  /** At most this many recent completions are remembered. Default 1024. */
  maxRecentCompletions?: number;
  /** Monotonic clock in milliseconds; tests inject a fake one. Default `performance.now()`. */
  now?: () => number;
}

/** One active call, from {@link CancellationTracker.register} until {@link CallRegistration.complete}. */
export interface CallRegistration {
  readonly key: RequestIdKey;
  /**
   * Aborted when a `notifications/cancelled` for this call is accepted; the abort reason is the one
   * given to `cancel`. Created on first access.
   */
  readonly signal: AbortSignal;
  /**
   * True when a pending cancellation for this key was consumed at registration: the signal is already
   * aborted and the call must answer "cancelled" without starting execution.
   */
  readonly cancelledEarly: boolean;
  /**
   * Aborts this call's signal for a reason of the transport's own (request deadline, client gone,
   * shutdown), without touching other calls that share its key.
   */
  abort(reason?: unknown): void;
  /** Marks the call finished (idempotent) and guards its key against late cancellations for a while. */
  complete(): void;
  /** Same as {@link complete}, for `using`. */
  [Symbol.dispose](): void;
}

/** What {@link CancellationTracker.cancel} did. */
export type CancelOutcome =
  /** Exactly one active call matched and was aborted (or had already been). */
  | 'cancelled'
  /** Several active calls share the key; none was touched. */
  | 'ambiguous'
  /** No active call matched; a pending cancellation is (or already was) recorded for the key. */
  | 'pending'
  /** No active call matched and the key completed recently; the notification was dropped. */
  | 'ignored';

/** Counts of what the tracker holds, for diagnostics and tests. */
export interface CancellationTrackerStats {
  readonly active: number;
  readonly tombstones: number;
  readonly recentCompletions: number;
}

/**
 * Matches `notifications/cancelled` to in-flight calls on a transport without sessions, where JSON-RPC
 * ids are client-scoped but clients cannot be told apart.
 *
 * - A cancellation that matches exactly one active call aborts it.
 * - When several active calls share the id it touches none, so one local client cannot cancel another's call.
 * - When none matches it is kept as a tombstone for `tombstoneTtlMs`, unless the id completed within
 *   `recentCompletionTtlMs` (a late notification must not poison an immediate reuse of the id). The
 *   first registration of that id consumes the tombstone and starts cancelled, so a cancellation that
 *   overtakes its request still wins. Repeated notifications do not extend a tombstone's lifetime.
 * - Tombstones and recent completions are each capped; at capacity expired entries go first, then the oldest.
 *
 * Expiry is lazy; the tracker holds no timers and needs no disposal.
 *
 * @example
 * const tracker = createCancellationTracker();
 * using call = tracker.register(requestIdKeyFromMessage(message.id, body));
 * if (call.cancelledEarly) return cancelledResult();
 * return await invoke(request, { signal: call.signal });
 * // elsewhere, on notifications/cancelled:
 * tracker.cancel(requestIdKeyFromMessage(note.params.requestId, body, 'params.requestId'), note.params.reason);
 */
export interface CancellationTracker {
  /** Registers an active call for `key`, atomically consuming a pending cancellation for it. */
  register(key: RequestIdKey): CallRegistration;
  /** Applies a cancellation notification for `key`; `reason` becomes the abort reason. */
  cancel(key: RequestIdKey, reason?: unknown): CancelOutcome;
  stats(): CancellationTrackerStats;
}

interface Tombstone {
  readonly reason: unknown;
}

interface ActiveCall {
  cancel(reason: unknown): void;
}

/** Creates a {@link CancellationTracker}. */
export function createCancellationTracker(options: CancellationTrackerOptions = {}): CancellationTracker {
  const now = options.now ?? (() => performance.now());
  const tombstones = createExpiringMap<Tombstone>({
    ttl: duration('tombstoneTtlMs', options.tombstoneTtlMs ?? 5000),
    capacity: capacity('maxTombstones', options.maxTombstones ?? 1024),
    now,
  });
  const recentCompletions = createExpiringMap<true>({
    ttl: duration('recentCompletionTtlMs', options.recentCompletionTtlMs ?? 5000),
    capacity: capacity('maxRecentCompletions', options.maxRecentCompletions ?? 1024),
    now,
  });
  const active = new Map<RequestIdKey, Set<ActiveCall>>();
  let activeCount = 0;

  return {
    register(key) {
      const tombstone = tombstones.take(key);
      // AbortSignals are costly to create in Node, so the controller is made on first use.
      let controller: AbortController | undefined;
      let cancelled = tombstone !== undefined;
      let reason = tombstone?.reason;
      const call: ActiveCall = {
        cancel(cancelReason) {
          if (cancelled) return;
          cancelled = true;
          reason = cancelReason;
          controller?.abort(cancelReason);
        },
      };
      let calls = active.get(key);
      if (calls === undefined) {
        calls = new Set();
        active.set(key, calls);
      }
      calls.add(call);
      activeCount += 1;

      let completed = false;
      const complete = (): void => {
        if (completed) return;
        completed = true;
        const current = active.get(key);
        if (current?.delete(call) === true) {
          activeCount -= 1;
          if (current.size === 0) active.delete(key);
        }
        recentCompletions.set(key, true);
      };
      return {
        key,
        get signal() {
          if (controller === undefined) {
            controller = new AbortController();
            if (cancelled) controller.abort(reason);
          }
          return controller.signal;
        },
        cancelledEarly: tombstone !== undefined,
        abort: (abortReason?: unknown) => call.cancel(abortReason),
        complete,
        [Symbol.dispose]: complete,
      };
    },

    cancel(key, reason) {
      const calls = active.get(key);
      if (calls !== undefined && calls.size > 0) {
        if (calls.size > 1) return 'ambiguous';
        for (const call of calls) call.cancel(reason);
        return 'cancelled';
      }
      if (recentCompletions.get(key) !== undefined) return 'ignored';
      tombstones.add(key, { reason });
      return 'pending';
    },

    stats() {
      return { active: activeCount, tombstones: tombstones.size, recentCompletions: recentCompletions.size };
    },
  };
}

function duration(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite number >= 0, got ${String(value)}`);
  return value;
}

function capacity(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be an integer >= 1, got ${String(value)}`);
  return value;
}
