/** The part of `AbortSignal` the invocation pipeline calls (structurally the capabilities package's `AbortSignalLike`). */
interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

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

/**
 * An {@link AbortHook} the owner aborts by calling `abort`. Holds its first listener without a Set.
 * It also answers the AbortSignal calls the invocation pipeline makes, so it can stand in for a
 * per-call AbortSignal (costly to create in Node 20).
 */
export class AbortLatch implements AbortHook, AbortSignalLike {
  aborted = false;
  reason: unknown = undefined;
  #first: ((reason: unknown) => void) | undefined;
  #more: Set<(reason: unknown) => void> | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const first = this.#first;
    const more = this.#more;
    this.#first = undefined;
    this.#more = undefined;
    first?.(reason);
    if (more !== undefined) for (const listener of more) listener(reason);
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type === 'abort' && !this.aborted) this.subscribe(listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort') return;
    if (this.#first === listener) this.#first = undefined;
    else this.#more?.delete(listener);
  }

  subscribe(listener: (reason: unknown) => void): () => void {
    if (this.aborted) {
      listener(this.reason);
      return NOOP;
    }
    if (this.#first === undefined) {
      this.#first = listener;
      return () => {
        if (this.#first === listener) this.#first = undefined;
      };
    }
    (this.#more ??= new Set()).add(listener);
    return () => {
      this.#more?.delete(listener);
    };
  }
}

/** An {@link AbortHook} over an AbortSignal (a class: per-call object literals with getters keep their closures alive past young GCs). */
class SignalHook implements AbortHook {
  readonly #signal: AbortSignal;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }

  get aborted(): boolean {
    return this.#signal.aborted;
  }

  get reason(): unknown {
    return this.#signal.reason as unknown;
  }

  subscribe(listener: (reason: unknown) => void): () => void {
    const signal = this.#signal;
    if (signal.aborted) {
      listener(signal.reason);
      return NOOP;
    }
    const onAbort = (): void => listener(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  }
}

/** Adapts an AbortSignal to an {@link AbortHook}. */
export function hookFromSignal(signal: AbortSignal): AbortHook {
  return new SignalHook(signal);
}

/** An AbortSignal aborted when `hook` aborts, for the rare consumer that needs a real signal. */
export function signalFromHook(hook: AbortHook): AbortSignal {
  const controller = new AbortController();
  hook.subscribe((reason) => controller.abort(reason));
  return controller.signal;
}
