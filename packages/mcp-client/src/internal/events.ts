import type { Logger, McpRuntimeEvent, McpRuntimeListener } from '../types.js';
import { errorText } from './util.js';

/** Unread events an iterator keeps; older ones are dropped beyond that. */
export const MAX_BUFFERED_EVENTS = 1_000;

/**
 * The runtime's event stream: synchronous listeners, and async iterators over them with a bounded
 * buffer. A listener that throws is logged and kept; close() ends every iterator.
 */
export class RuntimeEvents {
  readonly #listeners = new Set<McpRuntimeListener>();
  readonly #ends = new Set<() => void>();
  readonly #logger: Logger;
  #closed = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  emit(event: McpRuntimeEvent): void {
    if (this.#closed) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#logger.error(`mcp: an event listener threw: ${errorText(error)}`);
      }
    }
  }

  subscribe(listener: McpRuntimeListener): () => void {
    if (this.#closed) return () => {};
    // Wrapped, so the same function subscribed twice gets two independent subscriptions.
    const entry: McpRuntimeListener = (event) => listener(event);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  iterate(signal?: AbortSignal): AsyncIterableIterator<McpRuntimeEvent> {
    const buffer: McpRuntimeEvent[] = [];
    let wake: ((result: IteratorResult<McpRuntimeEvent>) => void) | undefined;
    let done = this.#closed || signal?.aborted === true;
    const finish = (): void => {
      if (done && !wake) return;
      done = true;
      unsubscribe();
      this.#ends.delete(finish);
      signal?.removeEventListener('abort', finish);
      const pending = wake;
      wake = undefined;
      pending?.({ value: undefined, done: true });
    };
    const unsubscribe = done
      ? () => {}
      : this.subscribe((event) => {
          if (wake) {
            const pending = wake;
            wake = undefined;
            pending({ value: event, done: false });
            return;
          }
          buffer.push(event);
          if (buffer.length > MAX_BUFFERED_EVENTS) buffer.shift();
        });
    if (!done) {
      this.#ends.add(finish);
      signal?.addEventListener('abort', finish, { once: true });
    }
    const iterator: AsyncIterableIterator<McpRuntimeEvent> = {
      next: () => {
        const event = buffer.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (wake = resolve));
      },
      return: () => {
        buffer.length = 0;
        finish();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Drops every listener and ends every iterator. */
  close(): void {
    this.#closed = true;
    for (const end of [...this.#ends]) end();
    this.#listeners.clear();
  }
}
