/** Reconnect delays: exponential from `initialMs`, capped at `maxMs`, with random jitter. */
export interface BackoffOptions {
  /** First delay. Default 1000 ms. */
  readonly initialMs?: number;
  /** Largest delay. Default 30 000 ms. */
  readonly maxMs?: number;
  /** Fraction of the delay taken off at random, so many clients do not reconnect in step. Default 0.2. */
  readonly jitter?: number;
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { initialMs: 1_000, maxMs: 30_000, jitter: 0.2 };

/**
 * The delay before reconnect attempt `attempt` (0 for the first retry): `min(maxMs, initialMs × 2^attempt)`
 * less up to `jitter` of it. With the defaults: ~1 s, 2 s, 4 s, … 30 s, never above 30 s.
 *
 * @example
 * backoffDelay(0, {}, () => 0); // 1000
 * backoffDelay(10, {}, () => 0); // 30000
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const initialMs = Math.max(1, options.initialMs ?? DEFAULT_BACKOFF.initialMs);
  const maxMs = Math.max(initialMs, options.maxMs ?? DEFAULT_BACKOFF.maxMs);
  const jitter = Math.min(Math.max(options.jitter ?? DEFAULT_BACKOFF.jitter, 0), 1);
  const exponent = Math.min(Math.max(Math.floor(attempt), 0), 30);
  const base = Math.min(maxMs, initialMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(base * (1 - jitter * r));
}
