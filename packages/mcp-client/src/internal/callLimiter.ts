import { CapabilityError } from '@capnode/capabilities';

/**
 * At most `max` calls at once to one server; the rest wait in arrival order. A waiting call that is
 * aborted (caller, pipeline deadline) leaves the queue at once and never runs.
 */
export class CallLimiter {
  readonly max: number;
  #running = 0;
  readonly #queue: Array<{ readonly start: () => void }> = [];

  constructor(max: number) {
    this.max = max;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /** Resolves with a release function once the call may run; rejects when `signal` aborts first. */
  acquire(server: string, signal?: AbortSignal): Promise<() => void> {
    if (this.#running < this.max) {
      this.#running += 1;
      return Promise.resolve(this.#release());
    }
    if (signal?.aborted) return Promise.reject(cancelled(server));
    return new Promise((resolve, reject) => {
      const entry = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#running += 1;
          resolve(this.#release());
        },
      };
      const onAbort = () => {
        const index = this.#queue.indexOf(entry);
        if (index !== -1) this.#queue.splice(index, 1);
        reject(cancelled(server));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(entry);
    });
  }

  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      this.#queue.shift()?.start();
    };
  }
}

function cancelled(server: string): Error {
  return new CapabilityError('cancelled', `The call was cancelled while waiting for a free slot on MCP server '${server}'.`);
}

/** The limiter a server entry asks for: `parallel_calls = false` means one call at a time; none when unlimited. */
export function limiterFor(server: { readonly name: string; readonly maxConcurrentCalls?: number; readonly parallelCalls?: boolean }): CallLimiter | undefined {
  const max = server.parallelCalls === false ? 1 : server.maxConcurrentCalls;
  return max === undefined ? undefined : new CallLimiter(max);
}
