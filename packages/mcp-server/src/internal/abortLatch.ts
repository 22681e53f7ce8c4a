/**
 * A one-shot abort source for per-request hot paths, where creating an AbortController per request
 * costs more than everything else a trivial call does.
 */
export interface AbortHook {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Calls `listener` once when aborted (immediately if already aborted); returns the unsubscribe. */
  subscribe(listener: (reason: unknown) => void): () => void;
}

const NOOP = (): void => {};

/** An {@link AbortHook} the owner aborts by calling `abort`. */
export class AbortLatch implements AbortHook {
  aborted = false;
  reason: unknown = undefined;
  #listeners: Set<(reason: unknown) => void> | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(reason);
  }

  subscribe(listener: (reason: unknown) => void): () => void {
    if (this.aborted) {
      listener(this.reason);
      return NOOP;
    }
    (this.#listeners ??= new Set()).add(listener);
    return () => {
      this.#listeners?.delete(listener);
    };
  }
}

/** Adapts an AbortSignal to an {@link AbortHook}. */
export function hookFromSignal(signal: AbortSignal): AbortHook {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    subscribe(listener) {
      if (signal.aborted) {
        listener(signal.reason);
        return NOOP;
      }
      const onAbort = (): void => listener(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      return () => signal.removeEventListener('abort', onAbort);
    },
  };
}

/** An AbortSignal aborted by whichever of `signal` and `hook` aborts first. */
export function linkSignal(signal: AbortSignal, hook: AbortHook): AbortSignal {
  const controller = new AbortController();
  const abort = (reason: unknown): void => controller.abort(reason);
  if (signal.aborted) abort(signal.reason);
  else signal.addEventListener('abort', () => abort(signal.reason), { once: true });
  hook.subscribe(abort);
  return controller.signal;
}
