import type { CallElicitor } from '../types.js';

/** What {@link CallsInFlight} asks its session. */
export interface CallsInFlightHost {
  /** The idle disconnect in ms (0: off); read each time the timer is armed. */
  idleTimeoutMs(): number;
  /** Whether there is a connection an idle timer may end. */
  connected(): boolean;
  /** The server has been idle for the whole timeout: disconnect it. */
  onIdle(): void;
}

/**
 * One server's calls in flight: the idle timer that runs only while there are none, and the
 * elicitors of the calls whose clients can take the server's questions.
 */
export class CallsInFlight {
  #active = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #elicitors = new Set<CallElicitor>();
  readonly #host: CallsInFlightHost;

  constructor(host: CallsInFlightHost) {
    this.#host = host;
  }

  /**
   * Marks a call in flight until the returned function is called: no idle disconnect meanwhile, and
   * `elicit` (the caller's client can answer questions) is offered to the server's questions.
   */
  begin(elicit?: CallElicitor): () => void {
    this.#active += 1;
    this.clear();
    // A fresh function per call, so two calls with the same elicitor are counted apart.
    const entry: CallElicitor | undefined = elicit ? (request, options) => elicit(request, options) : undefined;
    if (entry) this.#elicitors.add(entry);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (entry) this.#elicitors.delete(entry);
      this.#active -= 1;
      if (this.#active === 0) this.arm();
    };
  }

  /**
   * The elicitor a server question goes to: the calling client's, when exactly one call in flight has
   * one (with several, which call asked cannot be told, so none is used).
   */
  elicitor(): CallElicitor | undefined {
    if (this.#elicitors.size !== 1) return undefined;
    return this.#elicitors.values().next().value;
  }

  /** (Re)starts the idle timer unless a call is in flight (after connecting, or other requests). */
  touch(): void {
    if (this.#active === 0) this.arm();
  }

  /** Stops the idle timer (disconnected, recycled, closed). */
  clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  arm(): void {
    this.clear();
    const ms = this.#host.idleTimeoutMs();
    if (ms <= 0 || !this.#host.connected()) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#active === 0) this.#host.onIdle();
    }, ms);
    // The connection itself keeps a harness alive; the timer must not.
    this.#timer.unref?.();
  }
}
