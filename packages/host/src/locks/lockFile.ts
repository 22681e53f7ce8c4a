import { randomBytes } from 'node:crypto';
import { linkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readPrivateFileSync } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';

/**
 * Lock files of the config directory (`run/host.lock`, `settings.json.lock`): JSON written to a
 * private temporary file and hard-linked into place, so a lock never exists half-written, and
 * taking one fails with EEXIST on anything at its path, a symlink included, without following it.
 */

/** Whether `pid` runs (EPERM: it runs under another user). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock as read: its content, nothing there, or something that does not parse (stale). */
export type LockRead<T> = T | 'missing' | 'damaged';

/**
 * Reads the lock at `path`; `parse` returns the content or undefined for a damaged one. A symlink or
 * non-regular file there is refused (`insecure_file`), never followed.
 */
export function readLockFile<T>(path: string, label: string, parse: (value: Record<string, unknown>) => T | undefined): LockRead<T> {
  const check = readPrivateFileSync(path, { label, exposed: 'fix' });
  if (check.state === 'missing') return 'missing';
  if (check.state === 'insecure') throw new HostError('insecure_file', check.message);
  try {
    const value: unknown = JSON.parse(check.text);
    return (typeof value === 'object' && value !== null ? parse(value as Record<string, unknown>) : undefined) ?? 'damaged';
  } catch {
    return 'damaged';
  }
}

/** A pid as a lock holds it: a positive integer, or undefined. */
export function lockPid(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Writes `content` to a new private temporary file beside `path`, to be linked into place; returns its path. */
export function writeLockCandidate(path: string, content: unknown): string {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, `${JSON.stringify(content)}\n`, { mode: 0o600, flag: 'wx' });
  return temp;
}

/** Links `temp` into place at `path`: true when this process now holds the lock, false when something is there. */
export function linkLock(temp: string, path: string): boolean {
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new HostError('io', `cannot create ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Moves a stale lock aside under a unique name, so of two processes taking over the same stale lock
 * only one removes it; when what was moved is not that lock (`isStaleOne` says no: another process
 * took over and locked meanwhile), it is linked back. Returns true when the stale lock was removed.
 */
export function takeOverStaleLock<T>(path: string, label: string, parse: (value: Record<string, unknown>) => T | undefined, isStaleOne: (moved: LockRead<T>) => boolean): boolean {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new HostError('io', `cannot remove the stale lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (isStaleOne(readLockFile(aside, label, parse))) return true;
    try {
      linkSync(aside, path);
    } catch {
      // Another process holds the lock now; the next attempt reads theirs.
    }
    return false;
  } finally {
    rmSync(aside, { force: true });
  }
}
