import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { McpClientError } from '../errors.js';
import { UPLOAD_EXTENSIONS, type BinaryStore } from '../results.js';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Refuses an `uploads/` that is a symlink or not a directory; creates it (0700) when missing. The
 * workspace itself is the caller's and is created as needed (it may be a symlink).
 */
async function ensureUploadsDir(workspace: string, dir: string): Promise<void> {
  await mkdir(workspace, { recursive: true, mode: 0o700 });
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const info = await lstat(dir);
  if (info.isSymbolicLink()) throw new McpClientError('unsafe_path', `${dir} is a symbolic link; refusing to write uploads through it`);
  if (!info.isDirectory()) throw new McpClientError('unsafe_path', `${dir} is not a directory`);
}

/**
 * Saves binary tool output under `<workspace>/uploads/`, named by content hash so repeated
 * payloads are written once. Files are created owner-readable only. Symlinks are never followed:
 * an `uploads/` that is a symlink, or an existing entry of that name that is not a regular file,
 * is refused (`unsafe_path`), and files are opened with `O_NOFOLLOW | O_EXCL`. The extension must be
 * one of {@link UPLOAD_EXTENSIONS} (otherwise `bin`).
 */
export function createUploadStore(workspace: string): BinaryStore {
  const dir = join(workspace, 'uploads');
  return {
    async write(bytes, extension) {
      // Checked on every write: the directory may be swapped for a symlink between writes.
      await ensureUploadsDir(workspace, dir);
      const safeExtension = UPLOAD_EXTENSIONS.has(extension) ? extension : 'bin';
      const name = `${createHash('sha256').update(bytes).digest('hex').slice(0, 24)}.${safeExtension}`;
      const path = join(dir, name);
      let handle;
      try {
        handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const existing = await lstat(path);
        if (!existing.isFile()) throw new McpClientError('unsafe_path', `${path} exists and is not a regular file; refusing to use it`);
        return path;
      }
      try {
        await handle.writeFile(bytes);
      } finally {
        await handle.close();
      }
      return path;
    },
  };
}
