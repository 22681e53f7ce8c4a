import { constants, type Stats } from 'node:fs';
import { lstat, open, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { pathRefusal } from './fsGuard.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** True when `a` and `b` describe the same file (device and inode). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * Opens the regular file at `path` (a real path the guard checked) for reading, and makes sure it is
 * still what was checked: a symlink put there since is not followed, a FIFO does not block, and a file
 * swapped in since (another inode) is refused.
 */
export async function openCheckedForRead(path: string, checked: Stats | undefined): Promise<{ handle: FileHandle; stats: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw pathRefusal('invalid_arguments', 'unreadable', `The file cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  const stats = await handle.stat();
  if (!stats.isFile() || (checked !== undefined && !sameFile(stats, checked))) {
    await handle.close();
    throw pathRefusal('denied', 'changed', 'The file changed while it was being opened; try again.');
  }
  return { handle, stats };
}

/** Reads up to `limit` bytes from the start of `handle`. */
export async function readPrefix(handle: FileHandle, limit: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(limit);
  let filled = 0;
  while (filled < limit) {
    const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Permission bits of the new file; a replaced file keeps its own. */
  readonly mode?: number;
  /** The file that is being replaced, as checked: refused when another file is there by now. */
  readonly replaces?: Stats;
}

/**
 * Writes `data` to `path` atomically: a temporary file beside it (created exclusively, never through a
 * symlink), flushed, given the replaced file's permission bits, then renamed over `path`. Readers see
 * the old content or the new, never a mix; a failure leaves the old file as it was.
 */
export async function writeFileAtomic(path: string, data: Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path).slice(0, 200)}.capnode-${randomBytes(6).toString('hex')}.tmp`);
  // A new file gets 0666 less the umask, as any program's would; a replaced one keeps its own bits.
  const mode = options.replaces ? options.replaces.mode & 0o7777 : options.mode;
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, mode === undefined ? 0o666 : mode & 0o777);
  try {
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // The directory must still be the one checked: a component swapped for a symlink since moves nothing elsewhere.
    if ((await realpath(dir)) !== dir) throw pathRefusal('denied', 'changed', 'The directory changed while the file was being written; nothing was written.');
    if (options.replaces) await checkStillThere(path, options.replaces);
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

async function checkStillThere(path: string, expected: Stats): Promise<void> {
  const now = await lstat(path).catch(() => undefined);
  if (!now || !now.isFile() || !sameFile(now, expected)) throw pathRefusal('denied', 'changed', 'The file changed while it was being written; nothing was written.');
}
