import { gatewayErrorDetailCode, type GatewayResponseFrame } from '@capnode/protocol/gateway';
import { GatewayError } from '../errors.js';
import { waitUntilSettled } from './waiters.js';

/** Deadline and cancellation of one request. */
export interface TrackOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** The `timeout` error's message. */
  readonly timeoutMessage: string;
}

/**
 * The requests of one connection waiting for their response frame. Each wait runs on the shared
 * deadline helper (through `waitUntilSettled`): a real timer and the caller's signal, both released
 * with the wait.
 */
export interface PendingRequests {
  readonly size: number;
  /** Waits for the response to request `id`; rejects with `timeout`, `aborted` or the response's `request_failed`. */
  track<T>(id: string, method: string, options: TrackOptions): Promise<T>;
  /** Settles the request a response frame answers; false when none waits for it. */
  settle(frame: GatewayResponseFrame): boolean;
  /** Ends one wait with `error` (e.g. the frame could not be sent). */
  fail(id: string, error: GatewayError): void;
  /** Ends every wait with `error` (the connection is gone). */
  failAll(error: GatewayError): void;
}

interface Entry {
  readonly method: string;
  readonly resolve: (payload: unknown) => void;
  readonly reject: (error: GatewayError) => void;
}

/** The `request_failed` error for a refused request. */
export function requestFailure(method: string, error: NonNullable<GatewayResponseFrame['error']>): GatewayError {
  const detailCode = gatewayErrorDetailCode(error);
  return new GatewayError('request_failed', `${method} failed: ${error.message}${error.code ? ` (${detailCode ?? error.code})` : ''}`, {
    gatewayCode: error.code,
    ...(detailCode ? { detailCode } : {}),
    details: error.details,
    retryable: error.retryable === true,
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  });
}

export function createPendingRequests(): PendingRequests {
  const entries = new Map<string, Entry>();
  return {
    get size() {
      return entries.size;
    },
    track<T>(id: string, method: string, options: TrackOptions): Promise<T> {
      return waitUntilSettled<T>(
        {
          timeoutMs: options.timeoutMs,
          signal: options.signal,
          timeoutError: () => new GatewayError('timeout', options.timeoutMessage, { retryable: true }),
          abortError: () => new GatewayError('aborted', `${method} was aborted`, { cause: options.signal?.reason }),
        },
        (settler) => {
          entries.set(id, { method, resolve: (payload) => settler.resolve(payload as T), reject: settler.reject });
          return () => entries.delete(id);
        },
      );
    },
    settle(frame) {
      const entry = entries.get(frame.id);
      if (!entry) return false;
      if (frame.ok) entry.resolve(frame.payload);
      else entry.reject(requestFailure(entry.method, frame.error!));
      return true;
    },
    fail(id, error) {
      entries.get(id)?.reject(error);
    },
    failAll(error) {
      for (const entry of [...entries.values()]) entry.reject(error);
    },
  };
}
