/** Options of {@link createExpiringMap}. */
export interface ExpiringMapOptions {
  /** How long an entry lives after it was (re)written, in clock units. */
  readonly ttl: number;
  /** At most this many entries are kept. */
  readonly capacity: number;
  readonly now: () => number;
}

/**
 * A map whose entries expire `ttl` after they were written and which holds at most `capacity` entries.
 *
 * Expiry is lazy (checked on access and on every write), so it needs no timer. Entries are kept in
 * write order, which is also expiry order; a write at capacity first drops the expired entries, then
 * the oldest remaining one.
 */
export interface ExpiringMap<V> {
  /** The live value for `key`, or `undefined`. */
  get(key: string): V | undefined;
  /** Removes and returns the live value for `key`. */
  take(key: string): V | undefined;
  /** Stores `value` unless a live entry exists (whose value and lifetime are then kept); true when stored. */
  add(key: string, value: V): boolean;
  /** Stores `value` with a fresh lifetime, replacing any entry. */
  set(key: string, value: V): void;
  /** The number of live entries. */
  readonly size: number;
}

interface Entry<V> {
  readonly value: V;
  readonly writtenAt: number;
}

export function createExpiringMap<V>({ ttl, capacity, now }: ExpiringMapOptions): ExpiringMap<V> {
  const entries = new Map<string, Entry<V>>();

  const isExpired = (entry: Entry<V>, at: number): boolean => at - entry.writtenAt >= ttl;

  const live = (key: string, at: number): Entry<V> | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (!isExpired(entry, at)) return entry;
    entries.delete(key);
    return undefined;
  };

  // No later than the oldest entry's write time (deletes only make it more conservative), so a write
  // that finds nothing expired skips the walk over the map.
  let oldestAt = Number.POSITIVE_INFINITY;

  const pruneExpired = (at: number): void => {
    if (at - oldestAt < ttl) return;
    for (const [key, entry] of entries) {
      if (!isExpired(entry, at)) {
        oldestAt = entry.writtenAt;
        return;
      }
      entries.delete(key);
    }
    oldestAt = Number.POSITIVE_INFINITY;
  };

  const write = (key: string, value: V, at: number): void => {
    entries.delete(key);
    pruneExpired(at);
    if (entries.size >= capacity) {
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
    entries.set(key, { value, writtenAt: at });
    if (at < oldestAt) oldestAt = at;
  };

  return {
    get(key) {
      return live(key, now())?.value;
    },
    take(key) {
      const entry = live(key, now());
      if (entry === undefined) return undefined;
      entries.delete(key);
      return entry.value;
    },
    add(key, value) {
      const at = now();
      if (live(key, at) !== undefined) return false;
      write(key, value, at);
      return true;
    },
    set(key, value) {
      write(key, value, now());
    },
    get size() {
      pruneExpired(now());
      return entries.size;
    },
  };
}
