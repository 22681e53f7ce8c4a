import type { Transport } from './contract.js';
import { MAX_TIMER_MS } from '@capnode/toolkit';

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
  /**
   * The client as the transport verified it (the name of the MCP token the call came with): shown
   * before `caller`, and whose share of the queue the request counts against.
   */
  readonly client?: string;
  readonly transport?: Transport;
  /** A one-line explanation for requests that are not a command line (e.g. a policy change). */
  readonly summary?: string;
  /**
   * The change the call makes to a file, as a unified line diff (`--- a`, `+++ b`, `@@` hunks), when
   * the command can tell before it runs (`fs.write`, `editor.*`): every prompt shows it line by line.
   */
  readonly diff?: string;
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

/** A request allowed while nobody waited on it: the answer is kept until the agent's retry claims it. */
export interface AnsweredApproval extends PendingApproval {
  readonly decision: Exclude<ApprovalDecision, 'deny'>;
  /** Epoch ms until which an identical retry runs. */
  readonly retryUntil: number;
}

/** The answer `request` resolves with. */
export interface ApprovalAnswer {
  readonly id: string;
  readonly decision: ApprovalDecision;
  readonly settlement: ApprovalSettlement;
}

export type ApprovalEvent =
  | { readonly type: 'requested'; readonly approval: PendingApproval }
  | { readonly type: 'resolved'; readonly approval: PendingApproval; readonly decision: ApprovalDecision; readonly settlement: ApprovalSettlement }
  /** An answer kept for the agent's retry was used by it (or discarded): it leaves {@link ApprovalBroker.answered}. */
  | { readonly type: 'retried'; readonly approval: PendingApproval };

/**
 * How a command waits for its approval (setting `approvals.wait`):
 * - `block`: the call waits until the request is answered or times out;
 * - `return`: the call returns at once with the failure `approval_pending`; an identical retry (same
 *   `argsHash`, same caller) gets the answer;
 * - `auto`: `block` when the caller can be kept informed while it waits (it sent a progress token,
 *   declared elicitation, or is the CLI or a gateway); otherwise the call is held for up to
 *   `holdMs` (an answer within it runs the call at once) and then returns like `return`.
 */
export type ApprovalWaitMode = 'auto' | 'block' | 'return';

/** Why {@link ApprovalBroker.answer} did or did not answer. */
export type ApprovalResolution = 'answered' | 'unknown' | 'hash_mismatch';

export interface ApprovalBrokerOptions {
  /** How long a request waits before it counts as denied. Default 120 000 ms. */
  readonly timeoutMs?: number;
  /** Most requests pending at once; more are denied at once (settlement `overflow`). Default 64. */
  readonly maxPending?: number;
  /**
   * Most requests one caller (same transport and caller name) may have pending at once; its further
   * requests are denied at once (settlement `overflow`) while other callers still get through.
   * Default a quarter of `maxPending` (16 of 64), at least 1.
   */
  readonly maxPendingPerCaller?: number;
  /**
   * Most requests one transport (`mcp-http`, `mcp-stdio`, `gateway`, `cli`, …) may have pending at
   * once, whatever caller names its clients report: a client that forges names can fill its own
   * transport's share but never the room the other transports keep. Default half of `maxPending`.
   */
  readonly maxPendingPerTransport?: number;
  /** How commands wait for answers (see {@link ApprovalWaitMode}); read on every request. Default `auto`. */
  readonly waitMode?: ApprovalWaitMode | (() => ApprovalWaitMode);
  /** How often a waiting call reports progress (keeps clients' request timeouts from firing). Default 5 000 ms. */
  readonly progressIntervalMs?: number;
  /**
   * In wait mode `auto`, how long a call from a client that cannot show progress is held for its
   * answer before it returns `approval_pending`; read on every request. Default 45 000 ms, below the
   * 60 s request timeout most clients use.
   */
  readonly holdMs?: number | (() => number);
  /**
   * Whether a waiting call may also put the question to the user through the caller's own client
   * (MCP elicitation); read on every request. Such an answer trusts the client application to show
   * the question to its user. Default true.
   */
  readonly elicitation?: boolean | (() => boolean);
  /** Clock for `createdAt` / `expiresAt` (epoch ms). Default `Date.now`. */
  readonly now?: () => number;
  /**
   * The policy's revision as it is now (the host passes its settings file's). An answer kept for a
   * retry applies only while the revision is the one it was given under: the person answered the
   * policy as it was, so a switch to a stricter one (even `deny` and back) discards it.
   */
  readonly policyRevision?: () => string | undefined;
}

export interface ApprovalRequestOptions {
  /** Aborting withdraws the request (settlement `cancelled`) unless it was opened with {@link ApprovalBroker.open}. */
  readonly signal?: AbortSignal;
  /** Called synchronously with the pending request once it exists (new or joined). */
  readonly onPending?: (approval: PendingApproval) => void;
}

/**
 * Holds approval requests until someone answers them. Commands ask through `request` (waiting) or
 * `open` + `claim` (returning at once, answered on retry); the host lists and answers them for the
 * CLI and the tray (`list`, `answer`, `subscribe`).
 */
export interface ApprovalBroker {
  /**
   * Waits for the answer to `input`. A request opened by {@link open} for the same caller and
   * `argsHash` that nobody waits on yet is joined; otherwise a new one is created. No answer within
   * `timeoutMs` counts as `deny` (settlement `timeout`). Aborting `signal` withdraws a request this
   * call created and rejects with the signal's reason.
   */
  request(input: ApprovalRequestInput, options?: ApprovalRequestOptions): Promise<ApprovalAnswer>;
  /**
   * Creates a pending request nobody waits on (the caller returns at once and retries): its answer is
   * kept for {@link claim} by the same caller with the same `argsHash`, for `timeoutMs` after it was
   * given. Returns the pending request, or the immediate answer when it is refused (`overflow`, `closed`).
   */
  open(input: ApprovalRequestInput): PendingApproval | ApprovalAnswer;
  /**
   * For a retry of `input` (same caller, same `argsHash`): the kept answer to an opened request
   * (consumed: an allowed request runs once), the request while it is still pending, or `undefined`.
   */
  claim(input: ApprovalRequestInput): { readonly answer: ApprovalAnswer } | { readonly pending: PendingApproval } | undefined;
  /** Pending requests, oldest first. */
  list(): readonly PendingApproval[];
  /**
   * Requests allowed for a retry that has not come yet, oldest first: the call runs when the agent
   * retries it before `retryUntil` (the dashboard shows them as "runs when the agent retries").
   */
  answered(): readonly AnsweredApproval[];
  /**
   * Answers a pending request. With `argsHash` (the hash the person was shown) the answer applies
   * only when it matches the request's own hash (`hash_mismatch` otherwise); `unknown` when the id is
   * not pending (already answered, expired, or never existed).
   */
  answer(id: string, decision: ApprovalDecision, options?: { readonly argsHash?: string }): ApprovalResolution;
  /** {@link answer}, true when it answered. */
  resolve(id: string, decision: ApprovalDecision, options?: { readonly argsHash?: string }): boolean;
  /** Receives `requested` and `resolved` events; returns the unsubscribe function. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
  readonly timeoutMs: number;
  /** The wait mode setting as it is now. */
  waitMode(): ApprovalWaitMode;
  /** Whether questions may go through the caller's client (the `elicitation` option as it is now). */
  elicitationEnabled(): boolean;
  /** The `holdMs` option as it is now (0 or more, at most `timeoutMs`). */
  holdMs(): number;
  readonly progressIntervalMs: number;
  /** Denies every pending request (settlement `closed`); later requests are denied at once. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Default {@link ApprovalBrokerOptions.holdMs}: under the 60 s request timeout of common clients. */
const DEFAULT_HOLD_MS = 45_000;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const ID_LENGTH = 10;
const DECISIONS: ReadonlySet<string> = new Set(['allow-once', 'allow-always', 'deny']);
const WAIT_MODES: ReadonlySet<string> = new Set(['auto', 'block', 'return']);

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

/** True when `value` is `auto`, `block` or `return`. */
export function isApprovalWaitMode(value: unknown): value is ApprovalWaitMode {
  return typeof value === 'string' && WAIT_MODES.has(value);
}

/**
 * Whose share of the queue a request counts against: the transport and the verified client (its
 * token's name), else the self-reported caller name.
 */
export function approvalCallerKey(input: Pick<ApprovalRequestInput, 'transport' | 'caller' | 'client'>): string {
  return input.client === undefined ? `${input.transport ?? ''}\u0000${input.caller ?? ''}` : `${input.transport ?? ''}\u0001${input.client}`;
}

/** The `holdMs` setting as it is now, within 0 … `timeoutMs`. */
function holdMsOf(setting: number | (() => number), timeoutMs: number): number {
  const value = typeof setting === 'function' ? setting() : setting;
  return Number.isFinite(value) ? Math.min(Math.max(Math.floor(value), 0), timeoutMs) : Math.min(DEFAULT_HOLD_MS, timeoutMs);
}

/** Where a retry finds an opened request: caller key and argument hash. */
function retryKey(input: ApprovalRequestInput): string | undefined {
  return input.argsHash === undefined ? undefined : `${approvalCallerKey(input)}\u0000${input.argsHash}`;
}

interface Entry {
  readonly approval: PendingApproval;
  readonly callerKey: string;
  readonly retryKey: string | undefined;
  /** Opened for a retry: its answer is kept for `claim` when nobody waits on it. */
  readonly opened: boolean;
  /** The one call waiting on it, if any. */
  waiter: ((answer: ApprovalAnswer) => void) | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface KeptAnswer {
  readonly answer: ApprovalAnswer;
  readonly revision: string | undefined;
  readonly timer: ReturnType<typeof setTimeout>;
  readonly approval: PendingApproval;
  readonly retryUntil: number;
}

/**
 * Answers to opened requests waiting for their retry, each for `retentionMs` after it was given, at
 * most `max` of them (the oldest goes first).
 */
function createKeptAnswers(retentionMs: number, max: number, now: () => number) {
  const kept = new Map<string, KeptAnswer>();
  return {
    /** The allowing answers still waiting for their retry, oldest first. */
    list(): AnsweredApproval[] {
      const answered: AnsweredApproval[] = [];
      for (const { answer, approval, retryUntil } of kept.values()) {
        if (answer.decision !== 'deny') answered.push({ ...approval, decision: answer.decision, retryUntil });
      }
      return answered;
    },
    keep(key: string, answer: ApprovalAnswer, revision: string | undefined, approval: PendingApproval): void {
      const earlier = kept.get(key);
      if (earlier) clearTimeout(earlier.timer);
      kept.delete(key);
      const timer = setTimeout(() => kept.delete(key), retentionMs);
      (timer as { unref?: () => void }).unref?.();
      kept.set(key, { answer, revision, timer, approval, retryUntil: now() + retentionMs });
      if (kept.size > max) {
        const [oldest] = kept;
        if (oldest) {
          clearTimeout(oldest[1].timer);
          kept.delete(oldest[0]);
        }
      }
    },
    /** The kept entry (consumed); its answer is undefined when it was given under another `revision` (discarded). */
    take(key: string, revision: string | undefined): { readonly approval: PendingApproval; readonly answer: ApprovalAnswer | undefined } | undefined {
      const entry = kept.get(key);
      if (!entry) return undefined;
      clearTimeout(entry.timer);
      kept.delete(key);
      return { approval: entry.approval, answer: entry.revision === revision ? entry.answer : undefined };
    },
    clear(): void {
      for (const { timer } of kept.values()) clearTimeout(timer);
      kept.clear();
    },
  };
}

/**
 * Creates an approval broker.
 *
 * @example
 * const broker = createApprovalBroker({ timeoutMs: 120_000 });
 * broker.subscribe((event) => { if (event.type === 'requested') showPrompt(event.approval); });
 * // later, from the CLI or the tray:
 * broker.answer(id, 'allow-once', { argsHash });
 */
export function createApprovalBroker(options: ApprovalBrokerOptions = {}): ApprovalBroker {
  const timeoutMs = Math.min(Math.max(Math.floor(options.timeoutMs ?? 120_000), 1), MAX_TIMER_MS);
  const maxPending = options.maxPending ?? 64;
  const maxPerCaller = Math.max(1, options.maxPendingPerCaller ?? Math.floor(maxPending / 4));
  const maxPerTransport = Math.max(maxPerCaller, options.maxPendingPerTransport ?? Math.floor(maxPending / 2));
  const progressIntervalMs = Math.min(Math.max(Math.floor(options.progressIntervalMs ?? 5_000), 1), MAX_TIMER_MS);
  const waitSetting = options.waitMode ?? 'auto';
  const elicitationSetting = options.elicitation ?? true;
  const holdSetting = options.holdMs ?? DEFAULT_HOLD_MS;
  const now = options.now ?? Date.now;
  const policyRevision = options.policyRevision ?? (() => undefined);
  const pending = new Map<string, Entry>();
  const kept = createKeptAnswers(timeoutMs, maxPending, now);
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

  const settle = (entry: Entry, decision: ApprovalDecision, settlement: ApprovalSettlement) => {
    if (pending.get(entry.approval.id) !== entry) return;
    clearTimeout(entry.timer);
    pending.delete(entry.approval.id);
    const answer: ApprovalAnswer = { id: entry.approval.id, decision, settlement };
    emit({ type: 'resolved', approval: entry.approval, decision, settlement });
    if (entry.waiter) entry.waiter(answer);
    else if (entry.opened && entry.retryKey !== undefined && settlement !== 'closed' && settlement !== 'cancelled') kept.keep(entry.retryKey, answer, policyRevision(), entry.approval);
  };

  /** A new pending entry, or the refusal when the queue (or this caller's share of it) is full. */
  const create = (input: ApprovalRequestInput, opened: boolean): Entry | ApprovalAnswer => {
    let id = createApprovalId();
    while (pending.has(id)) id = createApprovalId();
    if (closed) return { id, decision: 'deny', settlement: 'closed' };
    const callerKey = approvalCallerKey(input);
    let mine = 0;
    let sameTransport = 0;
    for (const entry of pending.values()) {
      if (entry.callerKey === callerKey) mine += 1;
      if (entry.approval.transport === input.transport) sameTransport += 1;
    }
    if (pending.size >= maxPending || mine >= maxPerCaller || sameTransport >= maxPerTransport) return { id, decision: 'deny', settlement: 'overflow' };
    const createdAt = now();
    const approval: PendingApproval = { ...input, id, createdAt, expiresAt: createdAt + timeoutMs };
    const entry: Entry = { approval, callerKey, retryKey: retryKey(input), opened, waiter: undefined, timer: undefined };
    entry.timer = setTimeout(() => settle(entry, 'deny', 'timeout'), timeoutMs);
    (entry.timer as { unref?: () => void }).unref?.();
    pending.set(id, entry);
    return entry;
  };

  const findOpened = (key: string | undefined): Entry | undefined => {
    if (key === undefined) return undefined;
    for (const entry of pending.values()) if (entry.opened && entry.retryKey === key) return entry;
    return undefined;
  };

  const broker: ApprovalBroker = {
    timeoutMs,
    progressIntervalMs,
    elicitationEnabled() {
      return (typeof elicitationSetting === 'function' ? elicitationSetting() : elicitationSetting) === true;
    },
    holdMs: () => holdMsOf(holdSetting, timeoutMs),
    waitMode() {
      const mode = typeof waitSetting === 'function' ? waitSetting() : waitSetting;
      return isApprovalWaitMode(mode) ? mode : 'auto';
    },
    request(input, requestOptions = {}) {
      const { signal, onPending } = requestOptions;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const joined = findOpened(retryKey(input));
      const entry = joined && joined.waiter === undefined ? joined : create(input, false);
      if (!('approval' in entry)) return Promise.resolve(entry);
      const created = entry !== joined;
      return new Promise<ApprovalAnswer>((resolvePromise, rejectPromise) => {
        const onAbort = () => {
          entry.waiter = undefined;
          // An opened request stays pending for the retry; one this call made is withdrawn.
          if (!entry.opened) settle(entry, 'deny', 'cancelled');
          rejectPromise(signal?.reason);
        };
        entry.waiter = (answer) => {
          signal?.removeEventListener('abort', onAbort);
          resolvePromise(answer);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        // Announced only once the waiter is attached: a listener may answer synchronously.
        if (created) emit({ type: 'requested', approval: entry.approval });
        onPending?.(entry.approval);
      });
    },
    open(input) {
      const existing = findOpened(retryKey(input));
      if (existing) return existing.approval;
      const entry = create(input, true);
      if (!('approval' in entry)) return entry;
      emit({ type: 'requested', approval: entry.approval });
      return entry.approval;
    },
    claim(input) {
      const key = retryKey(input);
      if (key === undefined) return undefined;
      const taken = kept.take(key, policyRevision());
      if (taken) emit({ type: 'retried', approval: taken.approval });
      if (taken?.answer) return { answer: taken.answer };
      const open = findOpened(key);
      return open ? { pending: open.approval } : undefined;
    },
    list() {
      return [...pending.values()].map((entry) => entry.approval);
    },
    answered: () => kept.list(),
    answer(id, decision, answerOptions = {}) {
      if (!isApprovalDecision(decision)) throw new TypeError(`Unknown approval decision '${String(decision)}'; use allow-once, allow-always or deny.`);
      const entry = pending.get(String(id).trim().toLowerCase());
      if (!entry) return 'unknown';
      const shown = answerOptions.argsHash;
      if (shown !== undefined && shown !== entry.approval.argsHash) return 'hash_mismatch';
      settle(entry, decision, 'answered');
      return 'answered';
    },
    resolve(id, decision, answerOptions) {
      return broker.answer(id, decision, answerOptions) === 'answered';
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      closed = true;
      for (const entry of [...pending.values()]) settle(entry, 'deny', 'closed');
      kept.clear();
    },
    [Symbol.asyncDispose]() {
      return broker.close();
    },
  };
  return broker;
}
