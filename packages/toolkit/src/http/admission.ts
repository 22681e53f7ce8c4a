interface Waiter {
  readonly resolve: (admitted: boolean) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * A counting semaphore for in-flight requests. A request that finds every slot taken waits up to
 * `waitMs` for one to free up, then is refused (the caller answers 503).
 */
export class Admission {
  readonly #max: number;
  readonly #waitMs: number;
  readonly #waiters: Waiter[] = [];
  readonly #idle: Array<() => void> = [];
  #active = 0;

  constructor(max: number, waitMs: number) {
    this.#max = max;
    this.#waitMs = waitMs;
  }

  get active(): number {
    return this.#active;
  }

  /** Takes a slot if one is free right now. */
  tryAcquire(): boolean {
    if (this.#active >= this.#max) return false;
    this.#active += 1;
    return true;
  }

  /** Takes a slot, waiting up to `waitMs`; resolves false when none freed up in time. */
  acquire(): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          resolve(false);
        }, this.#waitMs),
      };
      this.#waiters.push(waiter);
    });
  }

  /** Frees a slot, handing it straight to the longest waiter if there is one. */
  release(): void {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      clearTimeout(waiter.timer);
      waiter.resolve(true);
      return;
    }
    this.#active -= 1;
    if (this.#active === 0) for (const notify of this.#idle.splice(0)) notify();
  }

  /** Resolves true once no slot is taken, or false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const notify = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const index = this.#idle.indexOf(notify);
        if (index >= 0) this.#idle.splice(index, 1);
        resolve(false);
      }, timeoutMs);
      this.#idle.push(notify);
    });
  }
}
