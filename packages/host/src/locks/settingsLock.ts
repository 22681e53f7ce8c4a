import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, unlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname } from 'node:path';
import { createDeadline } from '@capnode/toolkit';
import { HostError, isHostError } from '../errors.js';
import { isPidAlive, linkLock, lockPid, readLockFile, takeOverStaleLock, writeLockCandidate, type LockRead } from './lockFile.js';

/** How long an update waits for another process's settings lock by default. */
export const DEFAULT_SETTINGS_LOCK_TIMEOUT_MS = 5_000;
/** A settings lock older than this is stale even when its pid runs (a reused pid, a hung writer). */
export const DEFAULT_SETTINGS_LOCK_STALE_MS = 30_000;
/** Pause between attempts while another process holds the lock. */
const RETRY_MS = 10;

/** What `<settings.json>.lock` holds while one process updates the settings. */
interface LockContent {
  readonly pid: number;
  /** Random per acquisition: tells this lock from any other with the same pid. */
  readonly token: string;
  /** `Date.now()` when taken. */
  readonly at: number;
}

export interface SettingsLockOptions {
  readonly timeoutMs?: number;
  readonly staleMs?: number;
  readonly signal?: AbortSignal;
  /** Liveness of a pid; default `process.kill(pid, 0)`. */
  readonly isAlive?: (pid: number) => boolean;
}

function parseLock(value: Record<string, unknown>): LockContent | undefined {
  return lockPid(value.pid) !== undefined && typeof value.token === 'string' && Number.isFinite(value.at) ? (value as unknown as LockContent) : undefined;
}

/** The lock at `path`; a symlink or non-regular file there is refused, never followed. */
function readLock(path: string): LockRead<LockContent> {
  try {
    return readLockFile(path, 'the settings lock', parseLock);
  } catch (error) {
    if (isHostError(error)) throw error;
    throw new HostError('io', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Takes over a stale lock (see {@link takeOverStaleLock}); the next attempt links ours. */
function takeOverStale(path: string, stale: LockContent | 'damaged'): void {
  takeOverStaleLock(path, 'the settings lock', parseLock, (moved) => (stale === 'damaged' ? moved === 'damaged' : typeof moved === 'object' && moved.token === stale.token));
}

function isStale(holder: LockContent | 'damaged', staleMs: number, isAlive: (pid: number) => boolean): boolean {
  if (holder === 'damaged') return true;
  return Date.now() - holder.at > staleMs || !isAlive(holder.pid);
}

function heldError(settingsPath: string, lockPath: string, holder: LockContent | undefined, timeoutMs: number): HostError {
  const who = holder === undefined ? 'another process' : `pid ${holder.pid} (since ${new Date(holder.at).toISOString()})`;
  const fix = holder === undefined ? '' : `; if pid ${holder.pid} is not a capnode process, remove ${lockPath}`;
  return new HostError('settings_locked', `cannot update ${settingsPath}: ${lockPath} is held by ${who} and was not released within ${timeoutMs} ms; nothing was written${fix}`);
}

/** One attempt: true when this process now holds the lock (`temp` linked into place). */
function tryAcquire(temp: string, path: string, staleMs: number, isAlive: (pid: number) => boolean): { held: true } | { held: false; holder?: LockContent } {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (linkLock(temp, path)) return { held: true };
    const holder = readLock(path);
    if (holder === 'missing') continue;
    if (holder !== 'damaged' && !isStale(holder, staleMs, isAlive)) return { held: false, holder };
    takeOverStale(path, holder);
  }
  return { held: false };
}

/**
 * Takes the cross-process lock `<settingsPath>.lock` (pid, token and time, linked into place from a
 * private temporary file so it never exists half-written), waiting with short pauses while a live
 * process holds it. A lock whose pid no longer runs, damaged, or older than `staleMs` is taken over.
 * Returns the release function (removes the lock only while it is still this one).
 * @throws HostError `settings_locked` after `timeoutMs`, naming the lock and its pid; `aborted` when `signal` aborts;
 *   `insecure_file` when the lock path is a symlink or not a regular file.
 */
export async function acquireSettingsLock(settingsPath: string, options: SettingsLockOptions = {}): Promise<() => void> {
  const path = `${settingsPath}.lock`;
  if (options.signal?.aborted) throw new HostError('aborted', `the settings update of ${settingsPath} was aborted`, { cause: options.signal.reason });
  const timeoutMs = options.timeoutMs ?? DEFAULT_SETTINGS_LOCK_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_SETTINGS_LOCK_STALE_MS;
  const isAlive = options.isAlive ?? isPidAlive;
  const content: LockContent = { pid: process.pid, token: randomBytes(8).toString('hex'), at: Date.now() };
  let temp: string;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    temp = writeLockCandidate(path, content);
  } catch (error) {
    throw new HostError('io', `cannot create ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    using deadline = createDeadline({ timeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
    for (;;) {
      const attempt = tryAcquire(temp, path, staleMs, isAlive);
      if (attempt.held) break;
      try {
        await sleep(RETRY_MS + Math.floor(Math.random() * RETRY_MS), undefined, { signal: deadline.signal });
      } catch (error) {
        if (!deadline.timedOut) throw new HostError('aborted', `the settings update of ${settingsPath} was aborted while waiting for ${path}`, { cause: deadline.signal.reason ?? error });
        const last = tryAcquire(temp, path, staleMs, isAlive);
        if (last.held) break;
        throw heldError(settingsPath, path, last.holder ?? attempt.holder, timeoutMs);
      }
    }
  } finally {
    rmSync(temp, { force: true });
  }
  return () => releaseLock(path, content.token);
}

function releaseLock(path: string, token: string): void {
  try {
    const current = readLock(path);
    if (typeof current === 'object' && current.token === token) unlinkSync(path);
  } catch {
    // Gone or replaced (taken over as stale): nothing of ours to remove.
  }
}
