import { armListedTimer, clearListedTimer, type ListedTimer, type TimerList } from './timerLists.js';

/**
 * The part of an `AbortSignal` a deadline reads. Any `AbortSignal` fits; an owner that tracks
 * cancellation itself can pass its own object instead of creating a signal per call.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Options of {@link createDeadline}, {@link armDeadline} and {@link waitFor}. */
export interface DeadlineOptions {
  /** Milliseconds until the deadline fires; `undefined` means only `signal` ends the wait. Capped at the largest timer delay. */
  readonly timeoutMs?: number;
  /** Aborting it ends the wait at once, with its reason. */
  readonly signal?: AbortSignalLike;
  /** The abort reason at the deadline. Default: a `TimeoutError` DOMException, as `AbortSignal.timeout` gives. */
  readonly timeoutReason?: () => unknown;
  /** The timer alone does not keep the process alive (`timer.unref()`), for waits a live connection or socket already holds open. Default false. */
  readonly unref?: boolean;
  /**
   * For a deadline armed on every request that nearly always ends before it fires: it is kept in one
   * list with every other such deadline of its duration, under one timer, instead of owning a timer.
   * Arming costs a clock read instead of a timer object, but it may fire a millisecond or two after a
   * plain timer armed at the same moment. Default false.
   */
  readonly sharedTimer?: boolean;
}

/** The handle of {@link armDeadline}: the timer and the listener on the parent signal. */
export interface DeadlineTimer extends Disposable {
  /** True once the timer (not the parent signal) ended the deadline. */
  readonly timedOut: boolean;
  /** Clears the timer and detaches from the parent signal; idempotent. */
  clear(): void;
}

/** A deadline backed by a real timer; see {@link createDeadline}. */
export interface Deadline extends DeadlineTimer {
  /** Aborted at the deadline or when the parent signal aborts, whichever comes first. */
  readonly signal: AbortSignal;
}

/** The largest delay `setTimeout` honours; longer ones fire at once, so every timer delay is capped at it. */
export const MAX_TIMER_MS = 2_147_483_647;

function timeoutError(timeoutMs: number): unknown {
  return new DOMException(`The operation timed out after ${timeoutMs} ms.`, 'TimeoutError');
}

/**
 * The timer and parent listener of {@link armDeadline}. A class, not an object literal: a literal
 * with a getter gets a hidden class of its own per evaluation, which keeps the closure alive until a
 * full GC (the invoker arms one per call). It is its own timer-list entry (see `timerLists.ts`), so
 * arming makes no `Timeout` object.
 */
function onOwnTimer(deadline: ArmedDeadline): void {
  deadline.onTimer();
}

class ArmedDeadline implements DeadlineTimer, ListedTimer {
  timedOut = false;
  timerDue = -1;
  timerPrev: ListedTimer | undefined = undefined;
  timerNext: ListedTimer | undefined = undefined;
  timerList: TimerList | undefined = undefined;
  timerFallback: ReturnType<typeof setTimeout> | undefined = undefined;
  readonly #parent: AbortSignalLike | undefined;
  readonly #onEnd: (reason: unknown, timedOut: boolean) => void;
  readonly #timeoutMs: number;
  readonly #timeoutReason: (() => unknown) | undefined;
  #onParentAbort: (() => void) | undefined = undefined;

  constructor(options: DeadlineOptions, onEnd: (reason: unknown, timedOut: boolean) => void) {
    const parent = options.signal;
    const { timeoutMs } = options;
    this.#parent = parent;
    this.#onEnd = onEnd;
    this.#timeoutMs = timeoutMs ?? 0;
    this.#timeoutReason = options.timeoutReason;
    if (parent?.aborted) {
      onEnd(parent.reason, false);
      return;
    }
    if (timeoutMs !== undefined && !(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a number >= 0, got ${String(timeoutMs)}`);
    if (parent !== undefined) {
      this.#onParentAbort = () => {
        this.clear();
        this.#onEnd(parent.reason, false);
      };
      parent.addEventListener('abort', this.#onParentAbort, { once: true });
    }
    if (timeoutMs === undefined) return;
    const delayMs = Math.min(timeoutMs, MAX_TIMER_MS);
    if (options.sharedTimer === true) {
      armListedTimer(this, Math.ceil(delayMs), options.unref === true);
      return;
    }
    this.timerFallback = setTimeout(onOwnTimer, delayMs, this);
    if (options.unref) (this.timerFallback as { unref?: () => void }).unref?.();
  }

  onTimer(): void {
    this.timerFallback = undefined;
    this.timedOut = true;
    if (this.#onParentAbort !== undefined) this.#parent?.removeEventListener('abort', this.#onParentAbort);
    this.#onEnd(this.#timeoutReason ? this.#timeoutReason() : timeoutError(this.#timeoutMs), true);
  }

  clear(): void {
    clearListedTimer(this);
    if (this.#onParentAbort !== undefined) this.#parent?.removeEventListener('abort', this.#onParentAbort);
  }

  [Symbol.dispose](): void {
    this.clear();
  }
}

/**
 * Calls `onEnd` once: at `timeoutMs` (`timedOut` true, `reason` from `timeoutReason`) or when
 * `signal` aborts (its reason), whichever comes first; at once, before returning, when `signal` is
 * already aborted. The primitive under {@link createDeadline}, for owners that keep their own abort
 * state and must not pay for an `AbortController` per call (the invoker's hot path). Call
 * {@link DeadlineTimer.clear} (or `using`) when the work ends.
 *
 * @example
 * using timer = armDeadline({ timeoutMs, signal }, (reason, timedOut) => stop(timedOut ? 'timeout' : 'cancelled', reason));
 */
export function armDeadline(options: DeadlineOptions, onEnd: (reason: unknown, timedOut: boolean) => void): DeadlineTimer {
  return new ArmedDeadline(options, onEnd);
}

class SignalDeadline implements Deadline {
  readonly #controller = new AbortController();
  readonly #timer: ArmedDeadline;
  readonly clear = (): void => this.#timer.clear();

  constructor(options: DeadlineOptions) {
    this.#timer = new ArmedDeadline(options, (reason) => this.#controller.abort(reason));
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get timedOut(): boolean {
    return this.#timer.timedOut;
  }

  [Symbol.dispose](): void {
    this.#timer.clear();
  }
}

/**
 * A signal aborted at `timeoutMs` or when `signal` aborts, driven by a real timer that the deadline
 * itself owns. It replaces `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 a timeout
 * signal reachable only through `AbortSignal.any` can be garbage-collected before it fires, and the
 * combined signal then never aborts. Call {@link Deadline.clear} (or `using`) when the work ends, so
 * no timer or listener outlives it.
 *
 * @example
 * using deadline = createDeadline({ timeoutMs: 5_000, signal });
 * await client.connect(transport, { signal: deadline.signal });
 */
export function createDeadline(options: DeadlineOptions = {}): Deadline {
  return new SignalDeadline(options);
}

/** Options of {@link delay}. */
export interface DelayOptions {
  /** Aborting it ends the delay at once: the promise rejects with its reason. */
  readonly signal?: AbortSignalLike;
  /** The timer alone does not keep the process alive. Default false. */
  readonly unref?: boolean;
}

/**
 * Resolves after `ms` milliseconds (capped at {@link MAX_TIMER_MS}); rejects with the signal's
 * reason as soon as `signal` aborts (at once when it already has), clearing the timer. The one
 * abortable sleep: retry back-off, reconnect pauses, settling time.
 *
 * @example
 * await delay(backoffMs, { signal }).catch(() => {}); // a pause that ends early on shutdown
 */
export function delay(ms: number, options: DelayOptions = {}): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    armDeadline({ ...options, timeoutMs: Math.max(0, ms), timeoutReason: () => undefined }, (reason, timedOut) => {
      if (timedOut) resolve();
      else reject(reason);
    });
  });
}

/**
 * Waits for `work` until `timeoutMs` passes or `signal` aborts, then rejects with the abort reason
 * (a `TimeoutError` DOMException at the deadline, unless `timeoutReason` says otherwise). A function
 * `work` is given the combined signal, so the operation itself can stop. The one shared helper for
 * "wait with a timeout and a signal": the timer is real and cleared when the wait ends.
 *
 * @example
 * const listed = await waitFor((signal) => client.listTools({}, { signal }), { timeoutMs: 10_000, signal });
 */
export function waitFor<T>(work: Promise<T> | ((signal: AbortSignal) => Promise<T>), options: DeadlineOptions = {}): Promise<T> {
  if (typeof work !== 'function' && options.timeoutMs === undefined) return untilSignal(work, options.signal);
  const deadline = createDeadline(options);
  const { signal } = deadline;
  if (signal.aborted) {
    if (typeof work !== 'function') work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  let promise: Promise<T>;
  try {
    promise = typeof work === 'function' ? work(signal) : work;
  } catch (error) {
    deadline.clear();
    return Promise.reject(error);
  }
  return watch(promise, signal, () => deadline.clear());
}

/**
 * {@link waitFor} of a promise with no timeout: only the caller's signal can end the wait, so it is
 * watched directly (no controller or timer of its own per wait).
 */
function untilSignal<T>(work: Promise<T>, signal: AbortSignalLike | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return watch(work, signal, undefined);
}

/** Settles as `work` does, or rejects with the signal's reason once it aborts; `settled` runs when `work` settles first. */
function watch<T>(work: Promise<T>, signal: AbortSignalLike, settled: (() => void) | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        settled?.();
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        settled?.();
        reject(error);
      },
    );
  });
}

/** True for the default deadline reason of {@link createDeadline} and `AbortSignal.timeout`. */
export function isTimeoutError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'TimeoutError';
}
