import type { Transport } from './contract.js';

/** The user's answer to an approval request. `allow-always` also adds an allowlist pattern. */
export type ApprovalDecision = 'allow-once' | 'allow-always' | 'deny';

/** How a request was settled: answered by someone, timed out, withdrawn by its caller, or the broker closed. */
export type ApprovalSettlement = 'answered' | 'timeout' | 'cancelled' | 'closed' | 'overflow';

/** What a command asks the user to approve. */
export interface ApprovalRequestInput {
  /** Canonical tool name, e.g. `system.run`. */
  readonly command: string;
  /** The command line to show the user (normalized argv, or the shell line). */
  readonly commandLine: string;
  readonly argv?: readonly string[];
  /** True for a command line that runs in a shell. */
  readonly shell?: boolean;
  readonly cwd?: string;
  /** Absolute path of the program that will run, when it was resolved. */
  readonly resolvedPath?: string;
  /**
   * Every environment variable the caller sets for the child, by name; values of secret-looking
   * names are already masked. Absent when the caller sets none.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** The call's own deadline for the command, in ms, when it sets one. */
  readonly timeoutMs?: number;
  /**
   * Hash of the exact request (command and arguments): an answer applies to this request only, and
   * an identical retry finds it again.
   */
  readonly argsHash?: string;
  /** Who asked (client name, node id), for the prompt. Self-reported by the client: show it as such. */
  readonly caller?: string;
  readonly transport?: Transport;
  /** A one-line explanation for requests that are not a command line (e.g. a policy change). */
  readonly summary?: string;
}

/** A request waiting for an answer, as listed to the CLI and the tray. */
export interface PendingApproval extends ApprovalRequestInput {
  /** Short unguessable id (10 characters, base32) used to answer. */
  readonly id: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms after which the request counts as denied. */
  readonly expiresAt: number;
}

/** The answer `request` resolves with. */
export interface ApprovalAnswer {
  readonly id: string;
  readonly decision: ApprovalDecision;
  readonly settlement: ApprovalSettlement;
}

export type ApprovalEvent =
  | { readonly type: 'requested'; readonly approval: PendingApproval }
  | { readonly type: 'resolved'; readonly approval: PendingApproval; readonly decision: ApprovalDecision; readonly settlement: ApprovalSettlement };

export interface ApprovalBrokerOptions {
  /** How long a request waits before it counts as denied. Default 120 000 ms. */
  readonly timeoutMs?: number;
  /** Most requests pending at once; more are denied at once (settlement `overflow`). Default 64. */
  readonly maxPending?: number;
  /** Clock for `createdAt` / `expiresAt` (epoch ms). Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Holds approval requests until someone answers them. Commands ask through `request`; the host
 * lists and answers them for the CLI and the tray (`list`, `resolve`, `subscribe`).
 */
export interface ApprovalBroker {
  /**
   * Creates a pending request and waits for its answer. No answer within `timeoutMs` counts as
   * `deny` (settlement `timeout`). Aborting `signal` withdraws the request and rejects with the
   * signal's reason.
   */
  request(input: ApprovalRequestInput, options?: { readonly signal?: AbortSignal }): Promise<ApprovalAnswer>;
  /** Pending requests, oldest first. */
  list(): readonly PendingApproval[];
  /** Answers a pending request; false when the id is unknown (already answered, expired, or never existed). */
  resolve(id: string, decision: ApprovalDecision): boolean;
  /** Receives `requested` and `resolved` events; returns the unsubscribe function. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
  readonly timeoutMs: number;
  /** Denies every pending request (settlement `closed`); later requests are denied at once. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const ID_LENGTH = 10;
const DECISIONS: ReadonlySet<string> = new Set(['allow-once', 'allow-always', 'deny']);
const MAX_TIMER_MS = 2_147_483_647;

/** 10 base32 characters (50 bits) from the platform CSPRNG. */
function createApprovalId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(ID_LENGTH));
  let id = '';
  for (const byte of bytes) id += BASE32[byte & 31];
  return id;
}

/** True when `value` is one of the three decisions. */
export function isApprovalDecision(value: unknown): value is ApprovalDecision {
  return typeof value === 'string' && DECISIONS.has(value);
}

interface Entry {
  readonly approval: PendingApproval;
  readonly settle: (decision: ApprovalDecision, settlement: ApprovalSettlement) => void;
}

/**
 * Creates an approval broker.
 *
 * @example
 * const broker = createApprovalBroker({ timeoutMs: 120_000 });
 * broker.subscribe((event) => { if (event.type === 'requested') showPrompt(event.approval); });
 * // later, from the CLI or the tray:
 * broker.resolve(id, 'allow-once');
 */
export function createApprovalBroker(options: ApprovalBrokerOptions = {}): ApprovalBroker {
  const timeoutMs = Math.min(Math.max(Math.floor(options.timeoutMs ?? 120_000), 1), MAX_TIMER_MS);
  const maxPending = options.maxPending ?? 64;
  const now = options.now ?? Date.now;
  const pending = new Map<string, Entry>();
  const listeners = new Set<(event: ApprovalEvent) => void>();
  let closed = false;

  const emit = (event: ApprovalEvent) => {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch {
        // A failing listener must not keep others from hearing about the request.
      }
    }
  };

  const broker: ApprovalBroker = {
    timeoutMs,
    request(input, requestOptions = {}) {
      const { signal } = requestOptions;
      if (signal?.aborted) return Promise.reject(signal.reason);
      let id = createApprovalId();
      while (pending.has(id)) id = createApprovalId();
      const createdAt = now();
      const approval: PendingApproval = { ...input, id, createdAt, expiresAt: createdAt + timeoutMs };
      if (closed || pending.size >= maxPending) {
        return Promise.resolve({ id, decision: 'deny', settlement: closed ? 'closed' : 'overflow' });
      }
      return new Promise<ApprovalAnswer>((resolvePromise, rejectPromise) => {
        const cleanup = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          pending.delete(id);
        };
        const settle = (decision: ApprovalDecision, settlement: ApprovalSettlement) => {
          cleanup();
          emit({ type: 'resolved', approval, decision, settlement });
          resolvePromise({ id, decision, settlement });
        };
        const onAbort = () => {
          cleanup();
          emit({ type: 'resolved', approval, decision: 'deny', settlement: 'cancelled' });
          rejectPromise(signal?.reason);
        };
        const timer = setTimeout(() => settle('deny', 'timeout'), timeoutMs);
        (timer as { unref?: () => void }).unref?.();
        signal?.addEventListener('abort', onAbort, { once: true });
        pending.set(id, { approval, settle });
        emit({ type: 'requested', approval });
      });
    },
    list() {
      return [...pending.values()].map((entry) => entry.approval);
    },
    resolve(id, decision) {
      if (!isApprovalDecision(decision)) throw new TypeError(`Unknown approval decision '${String(decision)}'; use allow-once, allow-always or deny.`);
      const entry = pending.get(id.trim().toLowerCase());
      if (!entry) return false;
      entry.settle(decision, 'answered');
      return true;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      closed = true;
      for (const entry of [...pending.values()]) entry.settle('deny', 'closed');
    },
    [Symbol.asyncDispose]() {
      return broker.close();
    },
  };
  return broker;
}
