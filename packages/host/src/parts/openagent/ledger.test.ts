import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callFingerprint, ledgerPrincipal, LEDGER_FILE, openIdempotencyLedger } from './ledger.js';

const principal = ledgerPrincipal('account-1', 'device-1', undefined);
const print = callFingerprint('capnode', 'oa.append', { line: 'a' });

describe('idempotency ledger', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'capnode-ledger-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('claims, refuses in flight and other arguments, replays a done result; the journal is 0600', () => {
    const ledger = openIdempotencyLedger(home);
    expect(ledger.claim(principal, 'k1', print, true)).toEqual({ kind: 'claimed' });
    expect(ledger.claim(principal, 'k1', print, true)).toMatchObject({ kind: 'refused', error: { code: 'idempotency_in_flight', data: { retry_after_ms: 1000 } } });
    expect(ledger.claim(principal, 'k1', callFingerprint('capnode', 'oa.append', { line: 'b' }), true)).toMatchObject({ kind: 'refused', error: { code: 'idempotency_conflict', data: { idempotency_key: 'k1' } } });
    ledger.complete(principal, 'k1', { content: [{ type: 'text', text: 'ok' }] });
    expect(ledger.claim(principal, 'k1', print, true)).toEqual({ kind: 'replay', result: { content: [{ type: 'text', text: 'ok' }] } });
    expect(ledger.claim(ledgerPrincipal('account-1', 'device-1', 'net'), 'k1', print, true)).toEqual({ kind: 'claimed' });
    ledger.close();
    expect(statSync(join(home, LEDGER_FILE)).mode & 0o777).toBe(0o600);
    // survives a restart
    const again = openIdempotencyLedger(home);
    expect(again.claim(principal, 'k1', print, true)).toMatchObject({ kind: 'replay' });
    again.close();
  });

  it('at start marks a mutating row left executing as indeterminate, forgets a safe one, compacts and skips a torn line', () => {
    const crashed = openIdempotencyLedger(home);
    crashed.claim(principal, 'mutating', print, true);
    crashed.claim(principal, 'safe', print, false);
    crashed.claim(principal, 'gone', print, true);
    crashed.abandon(principal, 'gone');
    // no close: a kill -9 leaves the journal as it is
    appendFileSync(join(home, LEDGER_FILE), '{"principal":"x","key');
    const restarted = openIdempotencyLedger(home);
    expect(restarted.claim(principal, 'mutating', print, true)).toMatchObject({ kind: 'refused', error: { code: 'CLIENT_RESULT_INDETERMINATE', data: { local_code: 'idempotency_indeterminate', manual_reconciliation_required: true } } });
    expect(restarted.claim(principal, 'safe', print, false)).toEqual({ kind: 'claimed' });
    expect(restarted.claim(principal, 'gone', print, true)).toEqual({ kind: 'claimed' });
    restarted.close();
    const lines = readFileSync(join(home, LEDGER_FILE), 'utf8').trim().split('\n');
    expect(lines.every((line) => JSON.parse(line) !== undefined)).toBe(true);
  });

  it('forgets rows after 24 h and takes over an expired lease of a safe call', () => {
    let now = 1_000_000;
    const ledger = openIdempotencyLedger(home, () => now);
    ledger.claim(principal, 'k', print, false);
    ledger.complete(principal, 'k', { content: [] });
    now += 24 * 3_600_000 + 1;
    expect(ledger.claim(principal, 'k', print, false)).toEqual({ kind: 'claimed' });
    ledger.close();
  });
});
