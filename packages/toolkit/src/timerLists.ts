/**
 * Timers for long deadlines armed on every request (a request deadline, a call deadline) that almost
 * always end before they fire. Each `setTimeout` makes a `Timeout` object with an async id and links
 * it into Node's list for its duration; at thousands of requests a second two of those per request
 * were a measurable share of a call. Here the armed object itself is the list node: one Node timer
 * per (duration, keeps-the-process-alive) list, set for the list's head, so arming and clearing are
 * a clock read and a few pointer writes.
 *
 * Entries of one list share a duration, so their order of arming is their order of expiry. A timer
 * fires no earlier than its delay, as `setTimeout` does; a list that empties drops its Node timer, so
 * an idle process holds no timer for it.
 */

/**
 * What a list holds: the armed object itself (no wrapper per arming). A class implementing it declares
 * the fields with their initial values (`timerDue = -1`, the rest `undefined`) so its shape is fixed.
 */
export interface ListedTimer {
  /** When it fires, in `performance.now()` milliseconds; `-1` while not armed. */
  timerDue: number;
  timerPrev: ListedTimer | undefined;
  timerNext: ListedTimer | undefined;
  timerList: TimerList | undefined;
  /** A plain timer when no list is kept for the duration (see {@link MAX_LISTS}). */
  timerFallback: ReturnType<typeof setTimeout> | undefined;
  /** Runs once when the delay passed (the entry is already off its list). */
  onTimer(): void;
}

export class TimerList {
  head: ListedTimer | undefined = undefined;
  tail: ListedTimer | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  readonly #ms: number;
  readonly #unref: boolean;

  constructor(ms: number, unref: boolean) {
    this.#ms = ms;
    this.#unref = unref;
  }

  add(entry: ListedTimer): void {
    // Whole milliseconds: a small integer field stays unboxed (a fractional one costs a heap number per arming).
    entry.timerDue = Math.ceil(performance.now()) + this.#ms;
    entry.timerList = this;
    entry.timerNext = undefined;
    entry.timerPrev = this.tail;
    if (this.tail === undefined) {
      this.head = entry;
      if (this.#timer === undefined) this.#arm(this.#ms);
      else if (!this.#unref) setRef(this.#timer, true);
    } else {
      this.tail.timerNext = entry;
    }
    this.tail = entry;
  }

  remove(entry: ListedTimer): void {
    const { timerPrev: prev, timerNext: next } = entry;
    if (prev === undefined) this.head = next;
    else prev.timerNext = next;
    if (next === undefined) this.tail = prev;
    else next.timerPrev = prev;
    entry.timerPrev = undefined;
    entry.timerNext = undefined;
    entry.timerList = undefined;
    entry.timerDue = -1;
    // The Node timer stays set when the list empties (a deadline armed and cleared within one call
    // would otherwise make and clear a timer each time); it no longer holds the process open, and when
    // it fires on an empty list it ends there.
    if (this.head === undefined && !this.#unref && this.#timer !== undefined) setRef(this.#timer, false);
  }

  #arm(delay: number): void {
    this.#timer = setTimeout(fireList, Math.max(1, Math.ceil(delay)), this);
    if (this.#unref) setRef(this.#timer, false);
  }

  /** @internal The list's Node timer fired. */
  fire(): void {
    this.#timer = undefined;
    const now = performance.now();
    try {
      let entry = this.head;
      while (entry !== undefined && entry.timerDue <= now) {
        this.remove(entry);
        entry.onTimer();
        entry = this.head;
      }
    } finally {
      // Also when a callback threw: the entries after it keep their timer.
      const head = this.head;
      if (head !== undefined && this.#timer === undefined) this.#arm(head.timerDue - performance.now());
    }
  }
}

/**
 * Lists kept at most; a duration beyond them gets a plain timer. Durations come from settings and
 * callers (a call's own `timeoutMs`), so the set of lists must not grow without bound.
 */
const MAX_LISTS = 64;
const lists = new Map<number, TimerList>();

/** `ref()`/`unref()` where timers have them (Node); elsewhere a timer holds nothing open. */
function setRef(timer: ReturnType<typeof setTimeout>, ref: boolean): void {
  const handle = timer as { ref?: () => void; unref?: () => void };
  if (ref) handle.ref?.();
  else handle.unref?.();
}

function fireList(list: TimerList): void {
  list.fire();
}

function dropAnEmptyList(): void {
  for (const [key, list] of lists) {
    if (list.head === undefined) {
      lists.delete(key);
      return;
    }
  }
}

function fireFallback(entry: ListedTimer): void {
  entry.timerFallback = undefined;
  entry.onTimer();
}

/**
 * Arms `entry` to run `onTimer` after `ms` milliseconds (a whole number up to the largest timer
 * delay); an entry already armed is re-armed. `unref` lets the process exit while it is pending.
 */
export function armListedTimer(entry: ListedTimer, ms: number, unref: boolean): void {
  clearListedTimer(entry);
  const key = unref ? -ms - 1 : ms;
  let list = lists.get(key);
  if (list === undefined) {
    if (lists.size >= MAX_LISTS) dropAnEmptyList();
    if (lists.size >= MAX_LISTS) {
      entry.timerFallback = setTimeout(fireFallback, ms, entry);
      if (unref) setRef(entry.timerFallback, false);
      return;
    }
    list = new TimerList(ms, unref);
    lists.set(key, list);
  }
  list.add(entry);
}

/** Disarms `entry`; nothing when it is not armed. */
export function clearListedTimer(entry: ListedTimer): void {
  entry.timerList?.remove(entry);
  if (entry.timerFallback !== undefined) {
    clearTimeout(entry.timerFallback);
    entry.timerFallback = undefined;
  }
}
