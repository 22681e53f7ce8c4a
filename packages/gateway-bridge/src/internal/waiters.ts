import { createDeadline } from '@capnode/toolkit';

/** The deadline and cancellation of one wait, and the errors it ends with. */
export interface WaitOptions {
  /** `undefined`: only `signal` (or the holder) ends the wait. */
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The error at the deadline (built then, so it may name the latest state). */
  readonly timeoutError: () => Error;
  /** The error when `signal` aborts. */
  readonly abortError: () => Error;
}

/** How the holder of a wait ends it; calls after the first do nothing. */
export interface Settler<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

/**
 * A promise its holder settles through the {@link Settler} given to `register`, unless the deadline
 * or the signal ends it first. Runs on the shared deadline helper (`createDeadline`), unref'd: the
 * open socket, not a waiting caller, keeps the process alive. `register` stores the settler and
 * returns how to forget it, which runs once the wait ends, whichever way; it is not called when the
 * signal has already aborted.
 */
export function waitUntilSettled<T>(options: WaitOptions, register: (settler: Settler<T>) => () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const deadline = createDeadline({ unref: true, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    let done = false;
    let forget: (() => void) | undefined;
    const finish = (): boolean => {
      if (done) return false;
      done = true;
      deadline.clear();
      deadline.signal.removeEventListener('abort', onAbort);
      forget?.();
      return true;
    };
    const settler: Settler<T> = {
      resolve(value) {
        if (finish()) resolve(value);
      },
      reject(error) {
        if (finish()) reject(error);
      },
    };
    const onAbort = () => settler.reject(deadline.timedOut ? options.timeoutError() : options.abortError());
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener('abort', onAbort, { once: true });
    const unregister = register(settler);
    if (done) unregister();
    else forget = unregister;
  });
}

/** Callers waiting for the same moment (a handshake, a subscription), each with its own deadline and signal. */
export interface WaiterSet<T> {
  wait(options: WaitOptions): Promise<T>;
  /** Resolves every current wait with `value`. */
  resolveAll(value: T): void;
  /** Rejects every current wait with `error`. */
  rejectAll(error: Error): void;
}

export function createWaiterSet<T>(): WaiterSet<T> {
  const settlers = new Set<Settler<T>>();
  return {
    wait: (options) =>
      waitUntilSettled<T>(options, (settler) => {
        settlers.add(settler);
        return () => settlers.delete(settler);
      }),
    resolveAll(value) {
      for (const settler of [...settlers]) settler.resolve(value);
    },
    rejectAll(error) {
      for (const settler of [...settlers]) settler.reject(error);
    },
  };
}
