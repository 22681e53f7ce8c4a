import type { AdmittedCall, CallOutcome, ExecuteCall } from './calls.js';
import { callFingerprint, LEDGER_LEASE_MS, type IdempotencyLedger } from './ledger.js';

/** How often a running call's lease is renewed (a third of the lease). */
const RENEW_MS = LEDGER_LEASE_MS / 3;

/** A queue that runs mutating calls one at a time; a call cancelled while waiting never runs. */
function createMutatingQueue() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(signal: AbortSignal, work: () => Promise<T>): Promise<T | undefined> => {
    const turn = tail.then(() => (signal.aborted ? undefined : work()));
    tail = turn.catch(() => undefined);
    return turn;
  };
}

/** Marks a replayed result as OpenAgent's ledger does. */
function replayed(result: Record<string, unknown>): Record<string, unknown> {
  return { ...result, _meta: { ...(result._meta as Record<string, unknown> | undefined), 'openagent/idempotent': true, 'openagent/replayed': true } };
}

/**
 * Runs each admitted call that is not read-only under the idempotency ledger: a done key replays, another fingerprint or a
 * live lease is refused, a key a crash left executing is indeterminate; otherwise the call runs
 * (mutating calls one at a time) and its outcome is recorded: done with the result, indeterminate for
 * a mutating call whose outcome is unknown, forgotten for one that did not run or may run again.
 */
export function createLedgerExecute(ledger: IdempotencyLedger, principal: string): ExecuteCall {
  const queue = createMutatingQueue();
  return async (call: AdmittedCall, run: () => Promise<CallOutcome>): Promise<CallOutcome> => {
    // A read-only call may simply run again: it needs no durable claim (and no fsync on its path).
    if (call.readOnly) return run();
    const { frame } = call;
    const key = frame.idempotency_key;
    const claim = ledger.claim(principal, key, callFingerprint(frame.server, frame.tool, frame.args), call.mutating);
    if (claim.kind === 'replay') return { kind: 'result', result: replayed(claim.result) };
    if (claim.kind === 'refused') return { kind: 'error', error: claim.error };
    const renew = setInterval(() => ledger.renew(principal, key), RENEW_MS);
    renew.unref?.();
    let outcome: CallOutcome | undefined;
    try {
      outcome = call.mutating ? await queue(call.signal, run) : await run();
    } catch (error) {
      if (call.mutating) ledger.indeterminate(principal, key);
      else ledger.abandon(principal, key);
      throw error;
    } finally {
      clearInterval(renew);
    }
    if (outcome === undefined) {
      ledger.abandon(principal, key);
      return { kind: 'error', error: { code: 'cancelled', message: String(call.signal.reason ?? 'cancelled').slice(0, 200) } };
    }
    if (outcome.kind === 'result') ledger.complete(principal, key, outcome.result);
    else if (outcome.kind === 'ambiguous' && call.mutating) ledger.indeterminate(principal, key);
    else ledger.abandon(principal, key);
    return outcome;
  };
}
