import { createDeadline } from '@capnode/toolkit';

/** How {@link InvokeLedger.submit} handled a call. */
export type InvokeAdmission =
  /** A new run started. */
  | 'started'
  /** The same idempotency key is running; the caller gets that run's result. */
  | 'joined'
  /** The same idempotency key finished recently; the caller gets the stored result. */
  | 'replayed'
  /** `maxConcurrent` runs are in flight; nothing ran. */
  | 'busy'
  /** The key was used for a different command or arguments; nothing ran. */
  | 'conflict';

export interface InvokeSubmission<R> {
  /** Id of this delivery (the gateway's invoke id); what `cancel` takes. */
  readonly invokeId: string;
  /** Deduplication key (the gateway's `idempotencyKey`, else the invoke id). */
  readonly key: string;
  /** Identifies what runs (command and arguments hash); a repeated key must repeat it. */
  readonly fingerprint: string;
  /** Does the work; `signal` aborts when every caller cancelled or the ledger closed. */
  readonly run: (signal: AbortSignal) => Promise<R>;
}

export type InvokeTicket<R> =
  | { readonly admission: 'started' | 'joined' | 'replayed'; readonly result: Promise<R> }
  | { readonly admission: 'busy' | 'conflict' };

export interface InvokeLedgerOptions {
  /** Most runs in flight at once; more are answered `busy`. Default 8. */
  readonly maxConcurrent?: number;
  /** How long a finished run's result is replayed for its key. Default 10 minutes. */
  readonly rememberMs?: number;
  /** Most finished results kept; the oldest go first. Default 1024. */
  readonly maxRemembered?: number;
  /** Clock (epoch ms). Default `Date.now`. */
  readonly now?: () => number;
}

export interface InvokeLedgerStats {
  readonly running: number;
  readonly remembered: number;
  readonly started: number;
  readonly joined: number;
  readonly replayed: number;
  readonly busy: number;
  readonly conflicts: number;
}

/**
 * Runs node invocations at most `maxConcurrent` at a time and at most once per idempotency key: a
 * repeated key joins the running call or replays its recent result instead of running again.
 * It holds no timers, so it never keeps a process alive.
 */
export interface InvokeLedger<R> {
  submit(submission: InvokeSubmission<R>): InvokeTicket<R>;
  /** The caller of `invokeId` gave up; the run is aborted once no caller waits for it. False if unknown. */
  cancel(invokeId: string): boolean;
  stats(): InvokeLedgerStats;
  /** Resolves when nothing runs (or after `timeoutMs`). */
  idle(timeoutMs?: number): Promise<void>;
  /** Aborts every run and refuses new ones (`busy`). */
  close(): void;
}

interface Running<R> {
  readonly fingerprint: string;
  readonly controller: AbortController;
  readonly result: Promise<R>;
  readonly waiters: Set<string>;
}

interface Finished<R> {
  readonly fingerprint: string;
  readonly result: R;
  readonly expiresAt: number;
}

/**
 * Creates an {@link InvokeLedger}.
 *
 * @example
 * const ledger = createInvokeLedger<Outcome>({ maxConcurrent: 8 });
 * const ticket = ledger.submit({ invokeId, key: idempotencyKey ?? invokeId, fingerprint, run: (signal) => invoke(signal) });
 * if (ticket.admission === 'busy') reply({ ok: false, error: { code: 'UNAVAILABLE', message: 'node busy, retry' } });
 */
export function createInvokeLedger<R>(options: InvokeLedgerOptions = {}): InvokeLedger<R> {
  const maxConcurrent = Math.max(1, options.maxConcurrent ?? 8);
  const rememberMs = Math.max(0, options.rememberMs ?? 10 * 60_000);
  const maxRemembered = Math.max(0, options.maxRemembered ?? 1024);
  const now = options.now ?? Date.now;
  const running = new Map<string, Running<R>>();
  const byInvokeId = new Map<string, string>();
  const finished = new Map<string, Finished<R>>();
  const idleWaiters = new Set<() => void>();
  let closed = false;
  const counts = { started: 0, joined: 0, replayed: 0, busy: 0, conflicts: 0 };

  const prune = () => {
    const time = now();
    for (const [key, entry] of finished) {
      if (entry.expiresAt > time && finished.size <= maxRemembered) break;
      finished.delete(key);
    }
  };

  const attach = (key: string, entry: Running<R>, invokeId: string) => {
    entry.waiters.add(invokeId);
    byInvokeId.set(invokeId, key);
  };

  return {
    submit(submission) {
      prune();
      const { key, fingerprint, invokeId } = submission;
      const active = running.get(key);
      if (active) {
        if (active.fingerprint !== fingerprint) {
          counts.conflicts += 1;
          return { admission: 'conflict' };
        }
        counts.joined += 1;
        attach(key, active, invokeId);
        return { admission: 'joined', result: active.result };
      }
      const done = finished.get(key);
      if (done) {
        if (done.fingerprint !== fingerprint) {
          counts.conflicts += 1;
          return { admission: 'conflict' };
        }
        counts.replayed += 1;
        return { admission: 'replayed', result: Promise.resolve(done.result) };
      }
      if (closed || running.size >= maxConcurrent) {
        counts.busy += 1;
        return { admission: 'busy' };
      }
      counts.started += 1;
      const controller = new AbortController();
      let entry!: Running<R>;
      const release = () => {
        running.delete(key);
        for (const waiter of entry.waiters) byInvokeId.delete(waiter);
        if (running.size === 0) for (const wake of [...idleWaiters]) wake();
      };
      const result = Promise.resolve()
        .then(() => submission.run(controller.signal))
        .then(
          (value) => {
            if (maxRemembered > 0 && rememberMs > 0) {
              finished.delete(key);
              finished.set(key, { fingerprint, result: value, expiresAt: now() + rememberMs });
            }
            release();
            prune();
            return value;
          },
          (error: unknown) => {
            // A run that threw is not remembered; a retry runs it again.
            release();
            throw error;
          },
        );
      entry = { fingerprint, controller, result, waiters: new Set() };
      running.set(key, entry);
      attach(key, entry, invokeId);
      return { admission: 'started', result };
    },
    cancel(invokeId) {
      const key = byInvokeId.get(invokeId);
      if (key === undefined) return false;
      const entry = running.get(key);
      byInvokeId.delete(invokeId);
      if (!entry) return false;
      entry.waiters.delete(invokeId);
      if (entry.waiters.size === 0) entry.controller.abort(new Error('cancelled by the caller'));
      return true;
    },
    stats() {
      prune();
      return { running: running.size, remembered: finished.size, ...counts };
    },
    idle(timeoutMs) {
      if (running.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        // unref: waiting for running invokes must not keep the process alive by itself.
        const deadline = createDeadline({ unref: true, ...(timeoutMs !== undefined ? { timeoutMs: timeoutMs > 0 ? timeoutMs : 0 } : {}) });
        const wake = () => {
          idleWaiters.delete(wake);
          deadline.clear();
          resolve();
        };
        idleWaiters.add(wake);
        deadline.signal.addEventListener('abort', wake, { once: true });
      });
    },
    close() {
      closed = true;
      for (const entry of running.values()) entry.controller.abort(new Error('the gateway node is closing'));
    },
  };
}
