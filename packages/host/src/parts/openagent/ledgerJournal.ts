import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync, fchmodSync, lstatSync } from 'node:fs';
import { dirname } from 'node:path';

/** One idempotency row, as the journal stores it (the last record of a key wins). */
export interface LedgerRow {
  readonly principal: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly state: 'executing' | 'done' | 'indeterminate' | 'abandoned';
  readonly mutating: boolean;
  /** Which host process wrote it (random per host start). */
  readonly owner: string;
  /** Epoch ms; an executing row's lease, renewed while the call runs. */
  readonly leaseUntil: number;
  /** Epoch ms after which the row is forgotten. */
  readonly expiresAt: number;
  /** A done row's result, when it was small enough to keep. */
  readonly result?: Record<string, unknown>;
}

const rowKey = (row: Pick<LedgerRow, 'principal' | 'key'>) => `${row.principal}\u0000${row.key}`;

function isRow(value: unknown): value is LedgerRow {
  const row = value as Partial<LedgerRow> | null;
  return typeof row === 'object' && row !== null && typeof row.principal === 'string' && typeof row.key === 'string' && typeof row.fingerprint === 'string' && typeof row.state === 'string' && typeof row.leaseUntil === 'number' && typeof row.expiresAt === 'number';
}

/** Reads the journal's rows (last record per key wins); a torn last line (a crash mid-write) is skipped. */
export function readJournal(path: string): Map<string, LedgerRow> {
  const rows = new Map<string, LedgerRow>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return rows;
    throw error;
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (isRow(value)) rows.set(rowKey(value), value);
  }
  return rows;
}

/** Writes `rows` as the whole journal: a 0600 temp file, fsync'd, renamed over the journal, the directory fsync'd. */
export function compactJournal(path: string, rows: Iterable<LedgerRow>): void {
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
    for (const row of rows) writeSync(fd, `${JSON.stringify(row)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  syncDirectory(dirname(path));
}

function syncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** An append-only journal file: every record is written and fsync'd before `append` returns. */
export interface JournalWriter {
  append(row: LedgerRow): void;
  close(): void;
}

/** Opens the journal for appending (0600; refuses a symlink). */
export function openJournal(path: string): JournalWriter {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) throw new Error(`${path} is a symlink; refusing to write the idempotency ledger there`);
  const fd = openSync(path, 'a', 0o600);
  fchmodSync(fd, 0o600);
  let open = true;
  return {
    append(row) {
      if (!open) return;
      writeSync(fd, `${JSON.stringify(row)}\n`);
      fsyncSync(fd);
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

export { rowKey };
