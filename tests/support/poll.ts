import { readFileSync } from 'node:fs';

/** How {@link eventually} polls. */
export interface PollOptions {
  /** Named in the timeout error: what the test was waiting for. */
  readonly what?: string;
  /** Default 10 s: generous, for loaded machines; tests never depend on tight timing. */
  readonly timeoutMs?: number;
  /** Pause between checks (after an async check settles). Default 20 ms. */
  readonly intervalMs?: number;
}

/**
 * Polls `check` until it returns a truthy value and resolves with that value; rejects once
 * `timeoutMs` has passed. The one polling helper of every test suite in the repository.
 *
 * @example
 * const entry = await eventually(() => log.find((line) => line.includes('ready')), { what: 'the ready line' });
 */
export async function eventually<T>(check: () => T | Promise<T>, options: PollOptions = {}): Promise<NonNullable<T>> {
  const { what = 'a condition', timeoutMs = 10_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** True while `pid` exists and is not a zombie waiting to be reaped (it has exited then). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
