import { constants, renameSync, rmSync } from 'node:fs';

/** Flags a log of the config directory is opened with: append, create, never through a symlink. */
export const LOG_OPEN_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (process.platform === 'win32' ? 0 : constants.O_NOFOLLOW);

/**
 * Shifts `path` → `.1` → … → `.<maxFiles-1>`, removing the oldest; with one file, removes `path`.
 * Synchronous: a rotation is a few renames, rare, and must not interleave with a write.
 */
export function shiftLogFiles(path: string, maxFiles: number): void {
  const name = (index: number) => (index === 0 ? path : `${path}.${index}`);
  try {
    rmSync(name(maxFiles - 1), { force: true });
  } catch {
    // The rename onto it reports what is wrong.
  }
  for (let index = maxFiles - 2; index >= 0; index -= 1) {
    try {
      renameSync(name(index), name(index + 1));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  if (maxFiles === 1) rmSync(path, { force: true });
}
