/** Options of {@link createDeadline} and {@link waitFor}. */
export interface DeadlineOptions {
  /** Milliseconds until the deadline fires; `undefined` means only `signal` ends the wait. Capped at the largest timer delay. */
  readonly timeoutMs?: number;
  /** Aborting it ends the wait at once, with its reason. */
  readonly signal?: AbortSignal;
  /** The abort reason at the deadline. Default: a `TimeoutError` DOMException, as `AbortSignal.timeout` gives. */
  readonly timeoutReason?: () => unknown;
  /** The timer alone does not keep the process alive (`timer.unref()`), for waits a live connection or socket already holds open. Default false. */
  readonly unref?: boolean;
}

/** A deadline backed by a real timer; see {@link createDeadline}. */
export interface Deadline extends Disposable {
  /** Aborted at the deadline or when the parent signal aborts, whichever comes first. */
  readonly signal: AbortSignal;
  /** True once the timer (not the parent signal) aborted {@link signal}. */
  readonly timedOut: boolean;
  /** Clears the timer and detaches from the parent signal; idempotent. {@link signal} stays as it is. */
  clear(): void;
}

/** The largest delay `setTimeout` honours; longer ones fire at once, so every timer delay is capped at it. */
export const MAX_TIMER_MS = 2_147_483_647;

function timeoutError(timeoutMs: number): unknown {
  return new DOMException(`The operation timed out after ${timeoutMs} ms.`, 'TimeoutError');
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
  const controller = new AbortController();
  const parent = options.signal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const onParentAbort = (): void => {
    clear();
    controller.abort(parent!.reason);
  };
  const clear = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) controller.abort(parent.reason);
  else {
    parent?.addEventListener('abort', onParentAbort, { once: true });
    const { timeoutMs } = options;
    if (timeoutMs !== undefined) {
      if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a number >= 0, got ${String(timeoutMs)}`);
      timer = setTimeout(() => {
        timer = undefined;
        timedOut = true;
        parent?.removeEventListener('abort', onParentAbort);
        controller.abort(options.timeoutReason ? options.timeoutReason() : timeoutError(timeoutMs));
      }, Math.min(timeoutMs, MAX_TIMER_MS));
      if (options.unref) (timer as { unref?: () => void }).unref?.();
    }
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    clear,
    [Symbol.dispose]: clear,
  };
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
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        deadline.clear();
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        deadline.clear();
        reject(error);
      },
    );
  });
}

/** True for the default deadline reason of {@link createDeadline} and `AbortSignal.timeout`. */
export function isTimeoutError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'TimeoutError';
}
