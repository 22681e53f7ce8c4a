import { randomBytes } from 'node:crypto';
import { defineErrorClass } from '@capnode/toolkit';
import { createPrivateFileExclusive, readPrivateFileSync, writePrivateFileAtomic, type PrivateFileProblem } from '@capnode/toolkit/node';

/** A fresh bearer token: 32 CSPRNG bytes, base64url without padding (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Thrown by {@link loadOrCreateToken} for a token file that must not be used: a symlink, not a
 * regular file, another user's, or readable by group or others. `message` names the file and the fix.
 */
export class InsecureTokenFileError extends defineErrorClass('InsecureTokenFileError', ['insecure_file']) {
  /** Why the file is refused. */
  readonly problem: PrivateFileProblem;
  readonly path: string;

  constructor(message: string, problem: PrivateFileProblem, path: string) {
    super('insecure_file', message);
    this.problem = problem;
    this.path = path;
  }
}

/** True for the error {@link loadOrCreateToken} throws for an insecure token file, across package copies and bundles. */
export function isInsecureTokenFileError(value: unknown): value is InsecureTokenFileError {
  return InsecureTokenFileError.is(value);
}

async function readToken(path: string): Promise<string | undefined> {
  const check = readPrivateFileSync(path, { label: 'the token file', exposed: 'refuse' });
  if (check.state === 'missing') return undefined;
  if (check.state === 'insecure') throw new InsecureTokenFileError(check.message, check.problem, path);
  const text = check.text.trim();
  return text.length > 0 ? text : undefined;
}

/** Writes `token` to `path` with mode 0600 via a temporary file and a rename, so readers never see half a token. */
async function writeToken(path: string, token: string): Promise<void> {
  await writePrivateFileAtomic(path, `${token}\n`);
}

/**
 * Reads the bearer token stored at `path`, creating it on first use. The token persists across
 * restarts and is regenerated only when the file is missing or empty. The file gets mode 0600 and a
 * directory this call creates gets 0700 (the modes have no effect on Windows, where the user
 * profile's ACL protects the file). A token file that is a symlink, not a regular file, another
 * user's, or that group or others can read is refused ({@link InsecureTokenFileError}, message with
 * the `chmod 600` fix): a token others could read is no secret. It is never followed or read.
 *
 * @example
 * const { token, created } = await loadOrCreateToken(join(configDir, 'mcp-token'));
 */
export async function loadOrCreateToken(path: string): Promise<{ token: string; created: boolean }> {
  const existing = await readToken(path);
  if (existing !== undefined) return { token: existing, created: false };
  const token = generateToken();
  // Created only if nothing is there (a temporary file hard-linked into place): when several processes
  // start at once, exactly one token wins and every one reads it.
  if (await createPrivateFileExclusive(path, `${token}\n`)) return { token, created: true };
  const raced = await readToken(path);
  if (raced !== undefined) return { token: raced, created: false };
  await writeToken(path, token);
  return { token, created: true };
}

/** Replaces the token at `path` with a fresh one and returns it; clients holding the old token get 401. */
export async function rotateToken(path: string): Promise<string> {
  const token = generateToken();
  await writeToken(path, token);
  return token;
}
