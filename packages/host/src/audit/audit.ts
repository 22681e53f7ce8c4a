import { lstat, open, type FileHandle } from 'node:fs/promises';
import type { InvocationHook, InvocationOutcome, InvocationRequest } from '@capnode/capabilities';
import { createSecretScrubber, scrubAndCap } from '@capnode/mcp-client/redact';
import { argumentsHashSync } from '@capnode/protocol/node';
import { LOG_OPEN_FLAGS, shiftLogFiles } from '../logging/logFiles.js';
import type { AuditRecord } from './auditRecord.js';
import type { AuditStats } from '../status/hostStatus.js';

export type { AuditRecord } from './auditRecord.js';
export type { AuditStats } from '../status/hostStatus.js';


/** Default size at which `audit.log` is rotated: 10 MiB. */
export const AUDIT_ROTATE_BYTES = 10 * 1024 * 1024;
/** Default number of files kept: `audit.log` and `audit.log.1` … `audit.log.4` (so at most 50 MiB). */
export const AUDIT_MAX_FILES = 5;
/** Default bytes of records waiting for the disk before new ones are dropped: 1 MiB. */
export const AUDIT_MAX_QUEUED_BYTES = 1024 * 1024;

export interface AuditLogOptions {
  readonly path: string;
  /** Size at which the log is rotated, checked before every write while it runs (and when opened). Default {@link AUDIT_ROTATE_BYTES}. */
  readonly rotateBytes?: number;
  /** Files kept, the live one included (`audit.log`, `.1`, … `.N-1`; the oldest is removed). Default {@link AUDIT_MAX_FILES}, at least 1. */
  readonly maxFiles?: number;
  /** Rotate while running (default). `false`: only when opened (a CLI process next to a running host leaves rotation to the host). */
  readonly rotateWhileRunning?: boolean;
  /** Records waiting for a slow or stalled disk, in bytes; beyond it new records are dropped and counted. Default {@link AUDIT_MAX_QUEUED_BYTES}. */
  readonly maxQueuedBytes?: number;
  /** How long `close()` waits for queued records to reach the disk. Default 2 s; what is left counts as dropped. */
  readonly closeTimeoutMs?: number;
  /** Receives the first write error, and the first drop (the log never fails or delays a call). */
  readonly onError?: (error: Error) => void;
}

/** The reserved command names of control records (see {@link RESERVED_COMMAND_PREFIX} of `@capnode/capabilities`). */
export type ControlCommand = 'capnode.settings' | 'capnode.token.rotate' | 'capnode.token.reload' | 'capnode.token.reveal' | 'capnode.session.signin' | 'capnode.session.signout';

/** A change made from the dashboard or the admin API, as {@link AuditLog.record} takes it. */
export interface ControlAuditEntry {
  readonly command: ControlCommand;
  readonly transport: 'dashboard' | 'admin';
  /** `ok` (default), or the failure code (`invalid_settings`, `failed`). */
  readonly outcome?: string;
  /** Setting paths, never values (see {@link AuditRecord.changed}). */
  readonly changed?: readonly string[];
  readonly durationMs?: number;
}

/** An append-only invocation log and the hook that feeds it. */
export interface AuditLog {
  readonly hook: InvocationHook;
  readonly path: string;
  /** Queues a control record (a settings change, a token rotation, a dashboard sign-in): scrubbed and bounded like call records. */
  record(entry: ControlAuditEntry): void;
  stats(): AuditStats;
  /** Resolves once every record queued so far was written (or dropped). */
  flush(): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Longest `command` / `caller` value written. */
const MAX_FIELD = 200;
/** Most paths a control record lists. */
const MAX_CHANGED = 32;
const scrubField = createSecretScrubber();

function hashArgs(args: unknown): string | undefined {
  try {
    return argumentsHashSync(args ?? {});
  } catch {
    return undefined;
  }
}

/** The record of one finished invocation: caller-controlled fields scrubbed and capped, arguments only as a hash. */
function toAuditRecord(request: InvocationRequest, outcome: InvocationOutcome): AuditRecord {
  return {
    time: new Date().toISOString(),
    command: scrubAndCap(outcome.command ?? request.command, scrubField, MAX_FIELD),
    transport: request.transport,
    ...(request.caller === undefined ? {} : { caller: scrubAndCap(request.caller, scrubField, MAX_FIELD) }),
    ...(request.client === undefined ? {} : { client: scrubAndCap(request.client, scrubField, MAX_FIELD) }),
    ...(request.requestId === undefined ? {} : { requestId: String(request.requestId).slice(0, MAX_FIELD) }),
    ...((hash) => (hash === undefined ? {} : { argsSha256: hash }))(hashArgs(request.args)),
    outcome: outcome.result.ok ? 'ok' : outcome.result.error.code,
    durationMs: Math.round(outcome.durationMs * 1000) / 1000,
  };
}

/** `paths` scrubbed and cut to {@link MAX_FIELD}; beyond {@link MAX_CHANGED} the last kept one says how many more there were. */
function boundChangedPaths(paths: readonly string[]): string[] {
  const scrubbed = paths.slice(0, MAX_CHANGED).map((path) => scrubAndCap(String(path), scrubField, MAX_FIELD));
  if (paths.length > MAX_CHANGED) scrubbed[MAX_CHANGED - 1] = `+${paths.length - MAX_CHANGED + 1} more`;
  return scrubbed;
}

function toControlRecord(entry: ControlAuditEntry): AuditRecord {
  return {
    time: new Date().toISOString(),
    command: entry.command,
    transport: entry.transport,
    outcome: scrubAndCap(entry.outcome ?? 'ok', scrubField, MAX_FIELD),
    durationMs: Math.round((entry.durationMs ?? 0) * 1000) / 1000,
    ...(entry.changed === undefined ? {} : { changed: boundChangedPaths(entry.changed) }),
  };
}

/**
 * Opens `path` for appending (mode 0600, never through a symlink), rotating it first when it is
 * already at `rotateBytes`; a regular file's group/other bits are cleared. `size` is 0 for anything
 * but a regular file (no rotation then).
 */
async function openAuditFile(path: string, rotateBytes: number, rotate: () => Promise<void>): Promise<{ handle: FileHandle; regular: boolean; size: number }> {
  let opened = await open(path, LOG_OPEN_FLAGS, 0o600);
  let stats = await opened.stat();
  const regular = stats.isFile();
  if (regular && stats.size >= rotateBytes && stats.size > 0) {
    await opened.close();
    await rotate();
    opened = await open(path, LOG_OPEN_FLAGS, 0o600);
    stats = await opened.stat();
  }
  if (regular && process.platform !== 'win32' && (stats.mode & 0o077) !== 0) await opened.chmod(0o600);
  return { handle: opened, regular, size: regular ? stats.size : 0 };
}

/** `'settled'` when `work` settles within `ms`, else `'timeout'` (the timer never keeps the process alive). */
async function settledWithin(work: Promise<void>, ms: number): Promise<'settled' | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
    timer.unref?.();
  });
  const result = await Promise.race([work.then(() => 'settled' as const), timedOut]);
  clearTimeout(timer);
  return result;
}

/**
 * Opens `audit.log` (mode 0600, appended, never through a symlink) and returns an `afterInvoke`
 * hook that queues one JSON line per invocation: command, transport, caller, argument hash,
 * outcome code, duration. The hook never waits for the disk: records are written in the background,
 * in order; when the disk stalls and more than `maxQueuedBytes` wait, new records are dropped and
 * counted ({@link AuditStats}). The log rotates by size while it runs: at `rotateBytes` the files
 * shift (`audit.log` → `.1` → … → `.<maxFiles-1>`, the oldest removed) and a new `audit.log` starts.
 * `record` adds the host's control records (changes made from the dashboard and the admin API) to the same stream.
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { path } = options;
  const rotateBytes = options.rotateBytes ?? AUDIT_ROTATE_BYTES;
  const maxFiles = Math.max(1, Math.floor(options.maxFiles ?? AUDIT_MAX_FILES));
  const maxQueuedBytes = options.maxQueuedBytes ?? AUDIT_MAX_QUEUED_BYTES;
  const closeTimeoutMs = options.closeTimeoutMs ?? 2_000;
  const rotateWhileRunning = options.rotateWhileRunning ?? true;
  let reportedError = false;
  let reportedDrop = false;
  const report = (error: Error) => {
    if (reportedError) return;
    reportedError = true;
    options.onError?.(error);
  };

  let written = 0;
  let dropped = 0;
  let rotations = 0;
  let queue: string[] = [];
  let queuedBytes = 0;
  let size = 0;
  let regular = true;
  let handle: FileHandle | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;

  const drop = (count: number, why: string) => {
    dropped += count;
    if (reportedDrop) return;
    reportedDrop = true;
    options.onError?.(new Error(`audit records dropped (${why}); later drops are only counted`));
  };

  async function rotate(): Promise<void> {
    await handle?.close().catch(() => undefined);
    handle = undefined;
    shiftLogFiles(path, maxFiles);
    rotations += 1;
  }

  async function openLog(): Promise<FileHandle> {
    const opened = await openAuditFile(path, rotateBytes, rotate);
    regular = opened.regular;
    size = opened.size;
    return opened.handle;
  }

  async function writeBatch(batch: string[], bytes: number): Promise<void> {
    try {
      handle ??= await openLog();
      if (rotateWhileRunning && regular && size > 0 && size + bytes > rotateBytes) {
        // Another process of this directory (a stdio host, the CLI) may have rotated already: then only reopen.
        const [onDisk, mine] = await Promise.all([lstat(path).catch(() => undefined), handle.stat()]);
        if (onDisk && onDisk.ino === mine.ino && onDisk.dev === mine.dev) await rotate();
        else await handle.close().catch(() => undefined);
        handle = await openLog();
      }
      await handle.write(batch.join(''));
      size += bytes;
      written += batch.length;
    } catch (error) {
      drop(batch.length, `cannot write ${path}: ${(error as Error).message}`);
      report(error as Error);
      // Reopen on the next batch (the file may have been removed, or space freed).
      await handle?.close().catch(() => undefined);
      handle = undefined;
    }
  }

  let draining: Promise<void> | undefined;
  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      const bytes = batch.reduce((total, line) => total + Buffer.byteLength(line), 0);
      await writeBatch(batch, bytes);
      queuedBytes -= bytes;
    }
  }
  const settle = (work: Promise<void>) =>
    work.finally(() => {
      draining = undefined;
      if (queue.length > 0) kick();
    });
  const kick = () => {
    draining ??= settle(drain());
  };
  // Open now, so a log over the limit is rotated at start and problems show early.
  draining = settle(
    openLog().then(
      (opened) => {
        handle = opened;
      },
      (error: unknown) => report(error as Error),
    ),
  );

  function enqueue(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (queuedBytes + bytes > maxQueuedBytes) {
      drop(1, `more than ${maxQueuedBytes} bytes are waiting for ${path}: the disk is slow or stalled`);
      return;
    }
    queue.push(line);
    queuedBytes += bytes;
    kick();
  }

  const hook: InvocationHook = {
    afterInvoke(_invocation, request, outcome) {
      if (closed) return;
      enqueue(`${JSON.stringify(toAuditRecord(request, outcome))}\n`);
    },
  };

  const flush = async () => {
    while (draining) await draining;
  };

  const log: AuditLog = {
    hook,
    path,
    record(entry) {
      if (closed) return;
      enqueue(`${JSON.stringify(toControlRecord(entry))}\n`);
    },
    stats: () => ({ written, dropped, queuedBytes, rotations }),
    flush,
    close() {
      closing ??= (async () => {
        closed = true;
        if ((await settledWithin(flush(), closeTimeoutMs)) === 'timeout') {
          // A stalled disk: what still waits is lost; the pending write finishes (or not) on its own.
          const waiting = queue.length;
          queue = [];
          if (waiting > 0) drop(waiting, `the disk did not take them within ${closeTimeoutMs} ms of closing`);
          return;
        }
        await handle?.close().catch(() => undefined);
        handle = undefined;
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => log.close(),
  };
  return log;
}
