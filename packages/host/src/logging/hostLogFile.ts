import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { LOG_OPEN_FLAGS, shiftLogFiles } from './logFiles.js';

export interface HostLogFileOptions {
  /** Rotate when the file reaches this size. */
  readonly rotateBytes: number;
  /** Files kept in all: `host.log` and `host.log.1` … `host.log.<maxFiles - 1>`. */
  readonly maxFiles: number;
}

/**
 * A host log sink that appends `<ISO time> <level> [pid] <message>` lines to `path` (0600, in a 0700
 * directory, never through a symlink), rotating by size like `audit.log`. Lines arrive already
 * scrubbed of secrets. Writes are synchronous (host log lines are rare: approvals, warnings,
 * errors) so nothing is lost at exit; after the
 * first write error (a full or read-only disk) the file is left alone and the host keeps running.
 * After `close()` lines are dropped: a late log from a part still winding down must not recreate the file.
 */
export function createHostLogFile(path: string, options: HostLogFileOptions): { write(level: string, message: string): void; close(): void } {
  let fd: number | undefined;
  let size = 0;
  let broken = false;
  let closed = false;
  const open = () => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    fd = openSync(path, LOG_OPEN_FLAGS, 0o600);
    const stats = fstatSync(fd);
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    size = stats.size;
  };
  const rotate = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    shiftLogFiles(path, options.maxFiles);
  };
  return {
    write(level, message) {
      if (broken || closed) return;
      try {
        if (fd === undefined) open();
        const line = Buffer.from(`${new Date().toISOString()} ${level} [${process.pid}] ${message.replace(/\r?\n/g, '\n    ')}\n`, 'utf8');
        if (size > 0 && size + line.length > options.rotateBytes) {
          rotate();
          open();
        }
        size += writeSync(fd!, line);
      } catch {
        broken = true;
      }
    },
    close() {
      closed = true;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
