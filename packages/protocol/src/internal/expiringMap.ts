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
  readonly key: string;
  readonly value: V;
  readonly writtenAt: number;
  /** No longer the map's entry for its key (replaced, taken or expired): its queue slot is spent. */
  dead: boolean;
}

/** Below this many spent slots the queue is not compacted. */
const COMPACT_AFTER = 1024;

export function createExpiringMap<V>({ ttl, capacity, now }: ExpiringMapOptions): ExpiringMap<V> {
  const entries = new Map<string, Entry<V>>();
  // Every write in write order (which is also expiry order); a slot whose entry is dead (no longer the
  // map's entry for its key: replaced or removed) is skipped. The flag saves the map lookups that
  // telling a spent slot from a live one would cost on every write. Evicting from the head of this queue
  // instead of iterating the Map keeps eviction O(1): a Map iterator walks over the holes its
  // deletions leave at the front.
  let queue: Entry<V>[] = [];
  let head = 0;

  const isExpired = (entry: Entry<V>, at: number): boolean => at - entry.writtenAt >= ttl;

  const remove = (entry: Entry<V>): void => {
    entry.dead = true;
    entries.delete(entry.key);
  };

  const live = (key: string, at: number): Entry<V> | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (!isExpired(entry, at)) return entry;
    remove(entry);
    return undefined;
  };

  const dropHead = (): void => {
    const entry = queue[head]!;
    queue[head] = undefined as unknown as Entry<V>;
    head += 1;
    if (!entry.dead) remove(entry);
  };

  // Spent slots are dropped from the front; replaced entries behind a live one are bounded by
  // rebuilding the queue from the map (its order is write order too) once they outnumber the live ones.
  const compact = (): void => {
    while (head < queue.length && queue[head]!.dead) dropHead();
    if (queue.length - head > 2 * capacity + COMPACT_AFTER) {
      queue = [...entries.values()];
      head = 0;
    } else if (head >= COMPACT_AFTER && head * 2 >= queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
  };

  const pruneExpired = (at: number): void => {
    while (head < queue.length && isExpired(queue[head]!, at)) dropHead();
  };

  const write = (key: string, value: V, at: number): void => {
    const earlier = entries.get(key);
    if (earlier !== undefined) remove(earlier);
    pruneExpired(at);
    while (entries.size >= capacity && head < queue.length) dropHead();
    const entry: Entry<V> = { key, value, writtenAt: at, dead: false };
    entries.set(key, entry);
    queue.push(entry);
    compact();
  };

  return {
    get(key) {
      return live(key, now())?.value;
    },
    take(key) {
      const entry = live(key, now());
      if (entry === undefined) return undefined;
      remove(entry);
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
      compact();
      return entries.size;
    },
  };
}
