import { createCompletionRing } from './internal/completionRing.js';
import { createExpiringMap } from './internal/expiringMap.js';
import type { RequestIdKey } from './requestId.js';
import { SlotMap } from '@capnode/toolkit';

/** Options of {@link createCancellationTracker}. Durations are in milliseconds of `now`. */
export interface CancellationTrackerOptions {
  /** How long a cancellation that matched no active call waits for its call to register. Default 5000. */
  tombstoneTtlMs?: number;
  /** At most this many pending cancellations are kept. Default 1024. */
  maxTombstones?: number;
  /** How long a completed id stays protected from late cancellations. Default 5000. */
  recentCompletionTtlMs?: number;
  /** At most this many recent completions are remembered (the oldest goes first). Default 1024. */
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
  /** Whether the call was cancelled or aborted. Unlike {@link signal}, reading it creates nothing. */
  readonly aborted: boolean;
  /** The abort reason once {@link aborted}. */
  readonly reason: unknown;
  /**
   * Listens for the abort the way an AbortSignal does, without creating one: the registration itself
   * can be handed to code that only reads `aborted`, `reason` and abort listeners (such as the capnode
   * invocation pipeline). Creating an AbortSignal costs microseconds in Node 20 and its garbage outlives
   * young-generation collections, which matters on a per-request path. A listener runs at most once.
   */
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
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

/** What the tracker keeps per active call; also the registration handed to the caller. */
class Registration implements CallRegistration {
  readonly key: RequestIdKey;
  readonly cancelledEarly: boolean;
  readonly #onComplete: (call: Registration) => void;
  #cancelled: boolean;
  #reason: unknown;
  // AbortSignals are costly to create in Node, so the controller is made on first use.
  #controller: AbortController | undefined;
  #listeners: Array<() => void> | undefined;
  #completed = false;

  constructor(key: RequestIdKey, tombstone: Tombstone | undefined, onComplete: (call: Registration) => void) {
    this.key = key;
    this.cancelledEarly = tombstone !== undefined;
    this.#cancelled = tombstone !== undefined;
    this.#reason = tombstone?.reason;
    this.#onComplete = onComplete;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#cancelled) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#cancelled;
  }

  get reason(): unknown {
    return this.#reason;
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.#cancelled) return;
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (type !== 'abort' || listeners === undefined) return;
    const index = listeners.indexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }

  abort(reason?: unknown): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  complete(): void {
    if (this.#completed) return;
    this.#completed = true;
    this.#onComplete(this);
  }

  [Symbol.dispose](): void {
    this.complete();
  }
}

/** Creates a {@link CancellationTracker}. */
export function createCancellationTracker(options: CancellationTrackerOptions = {}): CancellationTracker {
  const now = options.now ?? (() => performance.now());
  const tombstones = createExpiringMap<Tombstone>({
    ttl: duration('tombstoneTtlMs', options.tombstoneTtlMs ?? 5000),
    capacity: capacity('maxTombstones', options.maxTombstones ?? 1024),
    now,
  });
  const recentCompletions = createCompletionRing({
    ttl: duration('recentCompletionTtlMs', options.recentCompletionTtlMs ?? 5000),
    capacity: capacity('maxRecentCompletions', options.maxRecentCompletions ?? 1024),
    now,
  });
  // The common case is one active call per key, kept as is; a Set only when clients share an id.
  const active = new SlotMap<RequestIdKey, Registration | Set<Registration>>();
  let activeCount = 0;
  // False while no cancellation is left pending, so registration skips the tombstone lookup.
  let tombstonesMayExist = false;

  const onComplete = (call: Registration): void => {
    const key = call.key;
    const current = active.get(key);
    if (current === call) {
      active.delete(key);
      activeCount -= 1;
    } else if (current instanceof Set && current.delete(call)) {
      activeCount -= 1;
      if (current.size === 1) active.set(key, current.values().next().value as Registration);
    }
    recentCompletions.record(key);
  };

  return {
    register(key) {
      let tombstone: Tombstone | undefined;
      if (tombstonesMayExist) {
        tombstone = tombstones.take(key);
        tombstonesMayExist = tombstones.size > 0;
      }
      const call = new Registration(key, tombstone, onComplete);
      const current = active.get(key);
      if (current === undefined) active.set(key, call);
      else if (current instanceof Set) current.add(call);
      else active.set(key, new Set([current, call]));
      activeCount += 1;
      return call;
    },

    cancel(key, reason) {
      const current = active.get(key);
      if (current instanceof Set) return 'ambiguous';
      if (current !== undefined) {
        current.abort(reason);
        return 'cancelled';
      }
      if (recentCompletions.has(key)) return 'ignored';
      tombstones.add(key, { reason });
      tombstonesMayExist = true;
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
