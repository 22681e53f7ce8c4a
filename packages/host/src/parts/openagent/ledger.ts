import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openAgentArgumentsSha256 } from '@capnode/protocol/node';
import type { OpenAgentError } from '@capnode/protocol/openagent';
import { compactJournal, openJournal, readJournal, rowKey, type JournalWriter, type LedgerRow } from './ledgerJournal.js';

/** The journal's file name in the config directory. */
export const LEDGER_FILE = 'openagent-ledger.jsonl';
/** How long a done row replays its result. */
export const LEDGER_RESULT_TTL_MS = 24 * 3_600_000;
/** An executing row's lease; renewed while the call runs. */
export const LEDGER_LEASE_MS = 30_000;
/** Largest result kept for replay (encoded); a bigger one is kept as "done" without it. */
const MAX_KEPT_RESULT_BYTES = 1024 * 1024;
/** What a caller is told to wait before retrying a key whose call is still running. */
const RETRY_AFTER_MS = 1000;

/** The ledger's principal: the account, device and network (never the per-start instance id), so a resend after a crash finds its row. */
export function ledgerPrincipal(accountId: string, deviceId: string, networkId: string | undefined): string {
  return JSON.stringify({ kind: 'interactive-client', account_id: accountId, device_id: deviceId, network_id: networkId ?? null });
}

/** The fingerprint of a call: the hash of its server, tool and args in OpenAgent's canonical form. */
export function callFingerprint(server: string, tool: string, args: unknown): string {
  return openAgentArgumentsSha256({ server, tool, args });
}

/** What a claim found. */
export type LedgerClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'replay'; readonly result: Record<string, unknown> }
  | { readonly kind: 'refused'; readonly error: OpenAgentError };

/** The durable idempotency ledger of OpenAgent calls (a 0600 fsync'd journal in the config directory). */
export interface IdempotencyLedger {
  /** Claims `key` for a call with `fingerprint`: runs it (claimed), replays a done result, or refuses (conflict, in flight, indeterminate). */
  claim(principal: string, key: string, fingerprint: string, mutating: boolean): LedgerClaim;
  /** Extends a running call's lease. */
  renew(principal: string, key: string): void;
  /** The call finished with `result`: replayed for 24 h. */
  complete(principal: string, key: string, result: Record<string, unknown>): void;
  /** The outcome of a mutating call is unknown: never re-run, answered indeterminate. */
  indeterminate(principal: string, key: string): void;
  /** The call did not run (or is safe to re-run): forget the claim. */
  abandon(principal: string, key: string): void;
  readonly path: string;
  close(): void;
}

function indeterminateError(key: string): OpenAgentError {
  return {
    code: 'CLIENT_RESULT_INDETERMINATE',
    message: 'A previous attempt of this call may have changed this computer; it is not run again',
    data: { local_code: 'idempotency_indeterminate', idempotency_key: key, manual_reconciliation_required: true, retryable: false },
  };
}

/**
 * Opens the ledger in `home`: reads the journal, forgets expired rows, marks mutating rows a crashed
 * host left executing as indeterminate (never re-run) and drops safe ones (they may run again), then
 * compacts the file.
 */
export function openIdempotencyLedger(home: string, now: () => number = Date.now): IdempotencyLedger {
  const path = join(home, LEDGER_FILE);
  const owner = randomUUID();
  const rows = readJournal(path);
  const started = now();
  for (const [id, row] of rows) {
    if (row.expiresAt <= started || row.state === 'abandoned') rows.delete(id);
    else if (row.state === 'executing' && row.mutating) rows.set(id, { ...row, state: 'indeterminate', expiresAt: started + LEDGER_RESULT_TTL_MS });
    else if (row.state === 'executing') rows.delete(id);
  }
  compactJournal(path, rows.values());
  const journal: JournalWriter = openJournal(path);
  const write = (row: LedgerRow) => {
    if (row.state === 'abandoned') rows.delete(rowKey(row));
    else rows.set(rowKey(row), row);
    journal.append(row);
  };
  const find = (principal: string, key: string) => {
    const row = rows.get(rowKey({ principal, key }));
    if (row && row.expiresAt <= now()) {
      rows.delete(rowKey(row));
      return undefined;
    }
    return row;
  };
  const update = (principal: string, key: string, change: (row: LedgerRow) => LedgerRow) => {
    const row = find(principal, key);
    if (row && row.owner === owner) write(change(row));
  };
  return {
    path,
    claim(principal, key, fingerprint, mutating) {
      const row = find(principal, key);
      const time = now();
      if (row && row.fingerprint !== fingerprint) {
        return { kind: 'refused', error: { code: 'idempotency_conflict', message: 'This idempotency key was used with other arguments', data: { idempotency_key: key } } };
      }
      if (row?.state === 'done') return row.result ? { kind: 'replay', result: row.result } : { kind: 'replay', result: { content: [{ type: 'text', text: 'The call completed earlier; its result was too large to keep.' }] } };
      if (row?.state === 'indeterminate') return { kind: 'refused', error: indeterminateError(key) };
      if (row?.state === 'executing' && (row.leaseUntil > time || row.owner === owner)) {
        return { kind: 'refused', error: { code: 'idempotency_in_flight', message: 'This call is still running', data: { idempotency_key: key, retry_after_ms: RETRY_AFTER_MS } } };
      }
      if (row?.state === 'executing' && row.mutating) {
        write({ ...row, state: 'indeterminate', expiresAt: time + LEDGER_RESULT_TTL_MS });
        return { kind: 'refused', error: indeterminateError(key) };
      }
      write({ principal, key, fingerprint, state: 'executing', mutating, owner, leaseUntil: time + LEDGER_LEASE_MS, expiresAt: time + LEDGER_RESULT_TTL_MS });
      return { kind: 'claimed' };
    },
    renew(principal, key) {
      update(principal, key, (row) => (row.state === 'executing' ? { ...row, leaseUntil: now() + LEDGER_LEASE_MS } : row));
    },
    complete(principal, key, result) {
      update(principal, key, (row) => {
        const kept = Buffer.byteLength(JSON.stringify(result)) <= MAX_KEPT_RESULT_BYTES;
        if (!kept && !row.mutating) return { ...row, state: 'abandoned' };
        const { result: _previous, ...rest } = row;
        return { ...rest, state: 'done', expiresAt: now() + LEDGER_RESULT_TTL_MS, ...(kept ? { result } : {}) };
      });
    },
    indeterminate(principal, key) {
      update(principal, key, (row) => ({ ...row, state: 'indeterminate', expiresAt: now() + LEDGER_RESULT_TTL_MS }));
    },
    abandon(principal, key) {
      update(principal, key, (row) => ({ ...row, state: 'abandoned' }));
    },
    close: () => journal.close(),
  };
}
