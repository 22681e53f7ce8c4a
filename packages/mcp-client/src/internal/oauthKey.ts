import { open } from 'node:fs/promises';
import { McpClientError } from '../errors.js';

/** Largest private key file read (a 16384-bit RSA key in PEM is about 12 KiB). */
export const MAX_PRIVATE_KEY_BYTES = 64 * 1024;

const isWindows = process.platform === 'win32';

/**
 * Reads the PKCS#8 PEM key of `auth.private_key_path`. Symlinks are followed (mounted secrets),
 * but the opened file must be a regular file of at most {@link MAX_PRIVATE_KEY_BYTES} that other
 * users cannot access, holding one `PRIVATE KEY` block.
 */
export async function loadPrivateKey(path: string, server: string): Promise<string> {
  const fail = (why: string, cause?: unknown) =>
    new McpClientError('auth_failed', `MCP server '${server}': refused auth.private_key_path ${path}: ${why}`, cause === undefined ? undefined : { cause });
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw fail((error as NodeJS.ErrnoException).code ?? (error as Error).message, error);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw fail('not a regular file');
    if (stat.size > MAX_PRIVATE_KEY_BYTES) throw fail(`larger than ${MAX_PRIVATE_KEY_BYTES} bytes`);
    if (!isWindows && (stat.mode & 0o077) !== 0) throw fail(`other users can access it (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`);
    const text = await handle.readFile('utf8');
    if (!/^-----BEGIN PRIVATE KEY-----\r?\n[\s\S]+\r?\n-----END PRIVATE KEY-----\s*$/.test(text.trim())) throw fail('not a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)');
    return text;
  } finally {
    await handle.close();
  }
}
