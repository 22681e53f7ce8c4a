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

/**
 * Replaces `path` with `data` so readers see the old content or the new, never a torn file: a
 * temporary sibling is created exclusively with `mode` (0600 by default), written, flushed, then
 * renamed over `path`. A missing directory is created 0700. A symlink at `path` is replaced, never
 * written through. On failure (or abort) the temporary file is removed and `path` keeps its old content.
 */
export async function writePrivateFileAtomic(path: string, data: string | Uint8Array, options: PrivateWriteAsyncOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o600;
  options.signal?.throwIfAborted();
  await mkdir(dirname(path), { recursive: true, mode: DIRECTORY_MODE });
  const temp = temporarySibling(path);
  try {
    await writeTemporary(temp, data, mode);
    options.signal?.throwIfAborted();
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}

/** The synchronous {@link writePrivateFileAtomic}. */
export function writePrivateFileAtomicSync(path: string, data: string | Uint8Array, options: PrivateWriteOptions = {}): void {
  const mode = options.mode ?? 0o600;
  mkdirSync(dirname(path), { recursive: true, mode: DIRECTORY_MODE });
  const temp = temporarySibling(path);
  try {
    writeTemporarySync(temp, data, mode);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

function isExists(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'EEXIST';
}

/**
 * Creates `path` holding `data` only if nothing is there, never visible half-written: a private
 * temporary sibling is written and flushed, then hard-linked into place (`link` fails with EEXIST on
 * anything at `path`, a dangling symlink included, without following it). Returns false when
 * something was there: of several processes racing, exactly one creates the file. A missing
 * directory is created 0700; other failures are thrown as they are.
 */
export async function createPrivateFileExclusive(path: string, data: string | Uint8Array, options: PrivateWriteAsyncOptions = {}): Promise<boolean> {
  const mode = options.mode ?? 0o600;
  options.signal?.throwIfAborted();
  await mkdir(dirname(path), { recursive: true, mode: DIRECTORY_MODE });
  const temp = temporarySibling(path);
  try {
    await writeTemporary(temp, data, mode);
    options.signal?.throwIfAborted();
    await link(temp, path);
    return true;
  } catch (error) {
    if (isExists(error)) return false;
    throw error;
  } finally {
    await rm(temp, { force: true }).catch(() => {});
  }
}

/** The synchronous {@link createPrivateFileExclusive}. */
export function createPrivateFileExclusiveSync(path: string, data: string | Uint8Array, options: PrivateWriteOptions = {}): boolean {
  const mode = options.mode ?? 0o600;
  mkdirSync(dirname(path), { recursive: true, mode: DIRECTORY_MODE });
  const temp = temporarySibling(path);
  try {
    writeTemporarySync(temp, data, mode);
    linkSync(temp, path);
    return true;
  } catch (error) {
    if (isExists(error)) return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}
