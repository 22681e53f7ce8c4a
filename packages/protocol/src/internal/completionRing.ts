/** Options of {@link createCompletionRing}. */
export interface CompletionRingOptions {
  /** How long a completion is remembered, in clock units. */
  readonly ttl: number;
  /** At most this many completions are remembered (the oldest is overwritten). */
  readonly capacity: number;
  readonly now: () => number;
}

/**
 * The keys of the most recent completions, each for `ttl`. Recording one is an array write (every
 * call records one); asking whether a key completed recently walks back from the newest entry until
 * they expire, which happens only for a cancellation that matched no active call.
 */
export interface CompletionRing {
  record(key: string): void;
  /** Whether `key` completed within `ttl` and is among the last `capacity` completions. */
  has(key: string): boolean;
  /** The number of distinct keys remembered (diagnostics). */
  readonly size: number;
}

export function createCompletionRing({ ttl, capacity, now }: CompletionRingOptions): CompletionRing {
  // Grown up to `capacity` as completions come, then written round: a large cap costs nothing until used.
  const keys: string[] = [];
  const times: number[] = [];
  // The slot the next completion goes to once full; the entries before it, wrapping, are newest first.
  let next = 0;

  /** Calls `visit` on each live entry, newest first, until it returns true. */
  const walk = (visit: (key: string) => boolean): void => {
    const at = now();
    const count = keys.length;
    for (let seen = 0, slot = next; seen < count; seen += 1) {
      slot = slot === 0 ? count - 1 : slot - 1;
      if (at - times[slot]! >= ttl) return;
      if (visit(keys[slot]!)) return;
    }
  };

  return {
    record(key) {
      const at = now();
      if (keys.length < capacity) {
        keys.push(key);
        times.push(at);
        next = keys.length === capacity ? 0 : keys.length;
        return;
      }
      keys[next] = key;
      times[next] = at;
      next = next + 1 === capacity ? 0 : next + 1;
    },
    has(key) {
      let found = false;
      walk((candidate) => (found = candidate === key));
      return found;
    },
    get size() {
      const distinct = new Set<string>();
      walk((key) => {
        distinct.add(key);
        return false;
      });
      return distinct.size;
    },
  };
}
