import type { HelloOk } from '@capnode/protocol/gateway';
import { createDeadline } from '@capnode/protocol';
import { GatewayError } from '../errors.js';

export interface ReadyWaitOptions {
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The `timeout` error, built when the deadline passes (it may name the last connect error). */
  readonly timeoutError: () => GatewayError;
}

/** Callers of `ready()` waiting for the next handshake (or the client's stop), on the shared deadline helper. */
export interface ReadyWaiters {
  wait(options: ReadyWaitOptions): Promise<HelloOk>;
  /** Resolves every wait with `hello`, or rejects every wait with `error`. */
  settle(result: { readonly hello: HelloOk } | { readonly error: GatewayError }): void;
}

export function createReadyWaiters(): ReadyWaiters {
  const waiters = new Set<{ resolve: (hello: HelloOk) => void; reject: (error: GatewayError) => void }>();
  return {
    wait(options) {
      return new Promise<HelloOk>((resolve, reject) => {
        const deadline = createDeadline({ unref: true, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}), ...(options.signal ? { signal: options.signal } : {}) });
        const finish = () => {
          deadline.clear();
          deadline.signal.removeEventListener('abort', onAbort);
          waiters.delete(entry);
        };
        const onAbort = () => {
          finish();
          reject(deadline.timedOut ? options.timeoutError() : new GatewayError('aborted', 'waiting for the gateway connection was aborted', { cause: options.signal?.reason }));
        };
        const entry = {
          resolve: (hello: HelloOk) => {
            finish();
            resolve(hello);
          },
          reject: (error: GatewayError) => {
            finish();
            reject(error);
          },
        };
        if (deadline.signal.aborted) return onAbort();
        deadline.signal.addEventListener('abort', onAbort, { once: true });
        waiters.add(entry);
      });
    },
    settle(result) {
      for (const waiter of [...waiters]) {
        if ('hello' in result) waiter.resolve(result.hello);
        else waiter.reject(result.error);
      }
    },
  };
}
