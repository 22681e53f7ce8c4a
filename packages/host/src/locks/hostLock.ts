import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFileAtomic } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';
import { isPidAlive, linkLock, lockPid, readLockFile, takeOverStaleLock, writeLockCandidate, type LockRead } from './lockFile.js';
import { ensurePrivateDirectory } from '../files/secureFile.js';

/** File name of the lock inside `run/`. */
export const HOST_LOCK_FILE = 'host.lock';

/** What `run/host.lock` holds while a host runs. */
export interface HostLockState {
  readonly pid: number;
  /** Random id of the host instance (two hosts of one process have the same pid, never the same instance). */
  readonly instance: string;
  readonly startedAt: string;
  /** The address the host binds (`127.0.0.1:8765`) until it listens. */
  readonly address?: string;
  /** The MCP endpoint once listening. */
  readonly url?: string;
  /** The admin base once the admin routes are served. */
  readonly adminUrl?: string;
}

/** The config directory's lock held by one running host. */
export interface HostLock {
  readonly path: string;
  readonly instance: string;
  /** Records where the host listens (for the message a second host prints). */
  update(change: Pick<HostLockState, 'url' | 'adminUrl'>): Promise<void>;
  /** Removes the lock if this instance still holds it. Idempotent. */
  release(): void;
}

export interface AcquireHostLockOptions {
  /** The host's `run/` directory. */
  readonly runDir: string;
  /** The config directory, for messages. */
  readonly home: string;
  readonly instance: string;
  readonly address?: string;
  /** Liveness of a pid; default `process.kill(pid, 0)`. */
  readonly isAlive?: (pid: number) => boolean;
  readonly onWarning?: (message: string) => void;
}

function parseLock(value: Record<string, unknown>): HostLockState | undefined {
  return lockPid(value.pid) !== undefined && typeof value.instance === 'string' ? (value as unknown as HostLockState) : undefined;
}

function readLock(path: string): LockRead<HostLockState> {
  return readLockFile(path, 'the host lock', parseLock);
}

function heldMessage(holder: HostLockState, home: string, path: string): string {
  const where = holder.url ? `MCP on ${holder.url}` : holder.adminUrl ? `admin routes on ${holder.adminUrl}` : holder.address ? `starting on ${holder.address}` : 'starting';
  return `another capnode host already runs with the config directory ${home}: pid ${holder.pid} (${where}, since ${holder.startedAt}). Stop it first (capnode status shows it), or give this one its own directory: CAPNODE_HOME=<dir> capnode serve. If pid ${holder.pid} is not a capnode host, remove ${path}`;
}

/**
 * Takes `run/host.lock` for this host: created exclusively (written to a temporary file, then
 * hard-linked into place, so it never exists half-written) with pid, instance id and address.
 * A lock whose pid no longer runs, or that is damaged, is stale and taken over.
 * @throws HostError `locked` naming the pid and URL of the host that holds it; `insecure_file` for a symlinked `run/` or lock.
 */
export function acquireHostLock(options: AcquireHostLockOptions): HostLock {
  const { runDir, home, instance } = options;
  const isAlive = options.isAlive ?? isPidAlive;
  const path = join(runDir, HOST_LOCK_FILE);
  try {
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new HostError('io', `cannot create ${runDir}: ${(error as Error).message}`, { cause: error });
  }
  ensurePrivateDirectory(runDir, 'the run directory', options.onWarning);
  let state: HostLockState = {
    pid: process.pid,
    instance,
    startedAt: new Date().toISOString(),
    ...(options.address === undefined ? {} : { address: options.address }),
  };
  const temp = writeLockCandidate(path, state);
  try {
    for (let attempt = 0; ; attempt += 1) {
      if (linkLock(temp, path)) break;
      const holder = readLock(path);
      if (holder === 'missing') continue;
      if (holder !== 'damaged' && isAlive(holder.pid)) throw new HostError('locked', heldMessage(holder, home, path));
      if (attempt >= 3) throw new HostError('locked', `cannot take ${path}: other processes keep replacing it`);
      takeOverStale(path, holder, options.onWarning);
    }
  } finally {
    rmSync(temp, { force: true });
  }
  let released = false;
  const holds = () => {
    const current = readLock(path);
    return typeof current === 'object' && current.instance === instance;
  };
  return {
    path,
    instance,
    async update(change) {
      if (released || !holds()) return;
      state = { ...state, ...change };
      await writePrivateFileAtomic(path, `${JSON.stringify(state)}\n`);
    },
    release() {
      if (released) return;
      released = true;
      try {
        if (holds()) rmSync(path, { force: true });
      } catch {
        // Unreadable or gone: nothing of ours to remove.
      }
    },
  };
}

/** Takes over a stale lock (see {@link takeOverStaleLock}), saying so. */
function takeOverStale(path: string, stale: HostLockState | 'damaged', onWarning: ((message: string) => void) | undefined): void {
  const isStaleOne = (moved: LockRead<HostLockState>) => (stale === 'damaged' ? moved === 'damaged' : typeof moved === 'object' && moved.instance === stale.instance);
  if (!takeOverStaleLock(path, 'the host lock', parseLock, isStaleOne)) return;
  onWarning?.(stale === 'damaged' ? `removed a damaged lock ${path}` : `removed the stale lock of pid ${stale.pid} (no longer running) from ${path}`);
}
