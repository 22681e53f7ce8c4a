import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { link, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Options of {@link writePrivateFileAtomic} and its siblings. */
export interface PrivateWriteOptions {
  /** The file's mode; default 0600 (owner only). Ignored on Windows, where the profile's ACL protects the file. */
  readonly mode?: number;
}

/** {@link PrivateWriteOptions} for the async helpers: an abort before the file is in place leaves `path` as it was. */
export interface PrivateWriteAsyncOptions extends PrivateWriteOptions {
  readonly signal?: AbortSignal;
}

const DIRECTORY_MODE = 0o700;

/** A fresh sibling of `path`: same directory (so the rename cannot cross file systems), unique name. */
function temporarySibling(path: string): string {
  return `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/** Creates `temp` exclusively (`wx`: never through a symlink planted there), writes, flushes and narrows it to `mode`. */
function writeTemporarySync(temp: string, data: string | Uint8Array, mode: number): void {
  const fd = openSync(temp, 'wx', mode);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

async function writeTemporary(temp: string, data: string | Uint8Array, mode: number): Promise<void> {
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/** Writes `data` to a fresh private sibling of `path`, hands it to `place`, and removes whatever is left of it. */
async function viaTemporary<T>(path: string, data: string | Uint8Array, options: PrivateWriteAsyncOptions, place: (temp: string) => Promise<T>): Promise<T> {
  options.signal?.throwIfAborted();
  await mkdir(dirname(path), { recursive: true, mode: DIRECTORY_MODE });
  const temp = temporarySibling(path);
  try {
    await writeTemporary(temp, data, options.mode ?? 0o600);
    options.signal?.throwIfAborted();
    return await place(temp);
  } finally {
    await rm(temp, { force: true }).catch(() => {});
  }
}

/** The synchronous {@link viaTemporary}. */
function viaTemporarySync<T>(path: string, data: string | Uint8Array, options: PrivateWriteOptions, place: (temp: string) => T): T {
  mkdirSync(dirname(path), { recursive: true, mode: DIRECTORY_MODE });
  const temp = temporarySibling(path);
  try {
    writeTemporarySync(temp, data, options.mode ?? 0o600);
    return place(temp);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** A failed `link`: false when something is at the path (EEXIST), else the error is thrown. */
function taken(error: unknown): false {
  if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
  throw error;
}

/**
 * Replaces `path` with `data` so readers see the old content or the new, never a torn file: a
 * temporary sibling is created exclusively with `mode` (0600 by default), written, flushed, then
 * renamed over `path`. A missing directory is created 0700. A symlink at `path` is replaced, never
 * written through. On failure (or abort) the temporary file is removed and `path` keeps its old content.
 */
export async function writePrivateFileAtomic(path: string, data: string | Uint8Array, options: PrivateWriteAsyncOptions = {}): Promise<void> {
  await viaTemporary(path, data, options, (temp) => rename(temp, path));
}

/** The synchronous {@link writePrivateFileAtomic}. */
export function writePrivateFileAtomicSync(path: string, data: string | Uint8Array, options: PrivateWriteOptions = {}): void {
  viaTemporarySync(path, data, options, (temp) => renameSync(temp, path));
}

/**
 * Creates `path` holding `data` only if nothing is there, never visible half-written: a private
 * temporary sibling is written and flushed, then hard-linked into place (`link` fails with EEXIST on
 * anything at `path`, a dangling symlink included, without following it). Returns false when
 * something was there: of several processes racing, exactly one creates the file. A missing
 * directory is created 0700; other failures are thrown as they are.
 */
export async function createPrivateFileExclusive(path: string, data: string | Uint8Array, options: PrivateWriteAsyncOptions = {}): Promise<boolean> {
  return viaTemporary(path, data, options, (temp) => link(temp, path).then(() => true, taken));
}

/** The synchronous {@link createPrivateFileExclusive}. */
export function createPrivateFileExclusiveSync(path: string, data: string | Uint8Array, options: PrivateWriteOptions = {}): boolean {
  return viaTemporarySync(path, data, options, (temp) => {
    try {
      linkSync(temp, path);
      return true;
    } catch (error) {
      return taken(error);
    }
  });
}
