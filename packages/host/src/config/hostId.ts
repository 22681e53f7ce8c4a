import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createPrivateFileExclusiveSync, writePrivateFileAtomicSync } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';
import { readConfigFile } from '../files/secureFile.js';

/** The file in the config directory holding its host id (see {@link configDirHostId}). */
export const HOST_ID_FILE = 'host-id';

const HOST_ID = /^[0-9a-f]{32}$/;

function readHostId(path: string, warn: (message: string) => void): string | undefined {
  const text = readConfigFile(path, 'the host id file', 'fix', warn);
  return text === undefined ? undefined : text.trim();
}

/**
 * The stable id of a config directory, declared by every host of it as its `capnode/host` marker:
 * a random 128-bit id kept in `<home>/host-id` (0600), made by the first host that starts. Every
 * host of the directory — `capnode serve`, `capnode mcp`, whichever starts first — declares the same
 * id, so one never imports another. A random id rather than a hash of the real path: it moves with
 * the directory, is the same through any symlink, bind mount or path spelling, and tells a client
 * that sees the marker nothing about the user's paths. A malformed file is replaced, with a warning.
 */
export function configDirHostId(home: string, warn: (message: string) => void): string {
  const path = join(home, HOST_ID_FILE);
  const existing = readHostId(path, warn);
  if (existing !== undefined && HOST_ID.test(existing)) return existing;
  const id = `${randomBytes(16).toString('hex')}\n`;
  try {
    if (existing === undefined) {
      // Of hosts starting at once exactly one creates the file; every one returns what it holds.
      createPrivateFileExclusiveSync(path, id);
    } else {
      warn(`${path} did not hold a host id; it was replaced`);
      // Replaced in one rename, never removed first: a host racing this one reads a whole id.
      writePrivateFileAtomicSync(path, id);
    }
  } catch (error) {
    throw new HostError('io', `cannot write the host id file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const current = readHostId(path, warn);
  if (current === undefined || !HOST_ID.test(current)) throw new HostError('io', `the host id file ${path} does not hold a host id after writing it`);
  return current;
}
