import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BinaryStore } from '../results.js';

/**
 * Saves binary tool output under `<workspace>/uploads/`, named by content hash so repeated
 * payloads are written once. Files are created owner-readable only.
 */
export function createUploadStore(workspace: string): BinaryStore {
  const dir = join(workspace, 'uploads');
  let ready: Promise<unknown> | undefined;
  return {
    async write(bytes, extension) {
      ready ??= mkdir(dir, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
      await ready;
      const safeExtension = extension.replace(/[^A-Za-z0-9]/g, '').slice(0, 8) || 'bin';
      const name = `${createHash('sha256').update(bytes).digest('hex').slice(0, 24)}.${safeExtension}`;
      const path = join(dir, name);
      try {
        await writeFile(path, bytes, { flag: 'wx', mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      return path;
    },
  };
}
