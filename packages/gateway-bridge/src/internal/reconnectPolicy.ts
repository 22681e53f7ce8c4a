import { backoffDelay, type BackoffOptions } from '../connection/backoff.js';
import type { GatewayError } from '../errors.js';

/** The close code a gateway sends when it shuts down to restart (`1012 service restart`). */
export const SERVICE_RESTART_CLOSE_CODE = 1012;
/** Delay between reconnect attempts while a restarting gateway comes back. */
export const SERVICE_RESTART_RETRY_MS = 500;
/** How long after a `1012` close the node keeps retrying at {@link SERVICE_RESTART_RETRY_MS}. */
export const SERVICE_RESTART_WINDOW_MS = 30_000;
/** Longest `retryAfterMs` a refusal can impose. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Why the client is about to reconnect. */
export interface ReconnectCause {
  /** The refusal or error that ended the attempt, if any (`retryAfterMs` is honoured). */
  readonly failure?: GatewayError | undefined;
  /** Reconnect at once (a redeclaration, a rejected device token). */
  readonly immediate?: boolean;
  /** The socket's close code, and whether the connection had completed its handshake. */
  readonly closeCode?: number;
  readonly wasOpen?: boolean;
}

/** When to reconnect: backoff per failed attempt, with the quick path after a gateway restart. */
export interface ReconnectPolicy {
  /** Failed connect attempts since the last handshake. */
  readonly attempt: number;
  /** The delay before the next attempt; counts the attempt unless it is immediate. */
  nextDelay(cause: ReconnectCause): number;
  /** A handshake succeeded: the next loss starts from the first delay again. */
  connected(): void;
}

export interface ReconnectPolicyOptions {
  readonly backoff?: BackoffOptions | undefined;
  readonly random?: () => number;
  readonly now?: () => number;
}

/**
 * Creates the reconnect policy: exponential backoff (1 s doubling to 30 s with jitter by default; a
 * retryable refusal's `retryAfterMs` wins). After a `1012 service restart` close of an open
 * connection it retries every {@link SERVICE_RESTART_RETRY_MS} for {@link SERVICE_RESTART_WINDOW_MS},
 * so the node is back within about a second of the gateway, then backs off as before.
 */
export function createReconnectPolicy(options: ReconnectPolicyOptions = {}): ReconnectPolicy {
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  let attempt = 0;
  let restartUntil: number | undefined;
  let restartAttempts = 0;
  return {
    get attempt() {
      return attempt;
    },
    nextDelay(cause) {
      if (cause.immediate) return 0;
      if (cause.wasOpen && cause.closeCode === SERVICE_RESTART_CLOSE_CODE) {
        restartUntil = now() + SERVICE_RESTART_WINDOW_MS;
        restartAttempts = 0;
      }
      const retryAfterMs = cause.failure?.retryAfterMs;
      let delay: number;
      if (retryAfterMs !== undefined) delay = Math.min(Math.max(retryAfterMs, 0), MAX_RETRY_AFTER_MS);
      else if (restartUntil !== undefined && now() < restartUntil) {
        delay = Math.min(SERVICE_RESTART_RETRY_MS, options.backoff?.maxMs ?? SERVICE_RESTART_RETRY_MS);
        restartAttempts += 1;
      } else delay = backoffDelay(attempt - restartAttempts, options.backoff, random);
      attempt += 1;
      return delay;
    },
    connected() {
      attempt = 0;
      restartUntil = undefined;
      restartAttempts = 0;
    },
  };
}
