import { checkPrivateDirectorySync, readPrivateFileSync, type ExposedFilePolicy } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';

/**
 * Reads a file of the config directory through {@link readPrivateFileSync}: `undefined` when it is
 * missing; a symlink, a non-regular file, another user's file, or (with `exposed: 'refuse'`) one
 * others can read is a {@link HostError} `insecure_file` naming the file and the fix. A mode that
 * was narrowed is reported through `onFixed`.
 */
export function readConfigFile(path: string, label: string, exposed: ExposedFilePolicy, onFixed?: (message: string) => void): string | undefined {
  let check;
  try {
    check = readPrivateFileSync(path, { label, exposed });
  } catch (error) {
    throw new HostError('io', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (check.state === 'missing') return undefined;
  if (check.state === 'insecure') throw new HostError('insecure_file', check.message);
  if (check.fixed) onFixed?.(check.fixed);
  return check.text;
}

/**
 * Makes sure a directory of the host (the config directory, `run/`) is private: a symlink or
 * another user's directory is a {@link HostError} `insecure_file`; a mode open to group or others
 * is narrowed to 0700 and reported through `onFixed`. A missing directory is left alone.
 */
export function ensurePrivateDirectory(path: string, label: string, onFixed?: (message: string) => void): void {
  let check;
  try {
    check = checkPrivateDirectorySync(path, { label, exposed: 'fix' });
  } catch (error) {
    throw new HostError('io', `cannot inspect ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (check.state === 'insecure') throw new HostError('insecure_file', check.message);
  if (check.state === 'ok' && check.fixed) onFixed?.(check.fixed);
}
