import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writePrivateFileAtomic } from '@capnode/toolkit/node';
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { McpClientError } from '../errors.js';

/** Largest token file read back (a registration, a token set and discovery metadata fit many times over). */
export const MAX_OAUTH_FILE_BYTES = 1024 * 1024;

/** What is kept per server: bound to the server URL, so credentials never follow a changed `url`. */
export interface OAuthRecord {
  readonly version: 1;
  readonly server: string;
  readonly url: string;
  /** The registered client; `redirect_uris` tells whether it fits the current loopback redirect. */
  readonly client?: StoredOAuthClientInformation & { readonly redirect_uris?: readonly string[] };
  /** `expires_at` (ms since the epoch) is computed from `expires_in` when the tokens are saved. */
  readonly tokens?: StoredOAuthTokens & { readonly expires_at?: number };
  readonly discovery?: OAuthDiscoveryState;
}

/** The token file of one server: `<dir>/<server>.json`, 0600 in a 0700 directory, never through a symlink. */
export interface OAuthStore {
  readonly path: string;
  /** The record, or an empty one when there is none or it belongs to another URL. */
  read(): Promise<OAuthRecord>;
  write(record: OAuthRecord): Promise<void>;
  remove(): Promise<void>;
}

const isWindows = process.platform === 'win32';

/** A file name for a server name: lower-case, every character outside `[a-z0-9_-]` as `~hh`. */
export function oauthFileName(server: string): string {
  let out = '';
  for (const char of server.toLowerCase()) {
    if (/^[a-z0-9_-]$/.test(char)) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `~${byte.toString(16).padStart(2, '0')}`;
  }
  return `${out}.json`;
}

function storeError(message: string, cause?: unknown): McpClientError {
  return new McpClientError('auth_failed', message, cause === undefined ? undefined : { cause });
}

async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stat = await lstat(dir);
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw storeError(`refused the OAuth token directory ${dir}: it is a symlink or not a directory`);
  if (isWindows) return;
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw storeError(`refused the OAuth token directory ${dir}: it belongs to another user`);
  if ((stat.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

function emptyRecord(server: string, url: string): OAuthRecord {
  return { version: 1, server, url };
}

function parseRecord(text: string, server: string, url: string, path: string): OAuthRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw storeError(`the OAuth token file ${path} is not valid JSON; delete it and run capnode servers login ${server}`, error);
  }
  const record = value as Partial<OAuthRecord> | null;
  if (typeof record !== 'object' || record === null || record.version !== 1) {
    throw storeError(`the OAuth token file ${path} has an unknown format; delete it and run capnode servers login ${server}`);
  }
  // Credentials obtained for another URL stay unused: a changed `url` must not receive them.
  if (record.url !== url) return emptyRecord(server, url);
  return {
    version: 1,
    server,
    url,
    ...(typeof record.client === 'object' && record.client !== null ? { client: record.client } : {}),
    ...(typeof record.tokens === 'object' && record.tokens !== null ? { tokens: record.tokens } : {}),
    ...(typeof record.discovery === 'object' && record.discovery !== null ? { discovery: record.discovery } : {}),
  };
}

/**
 * Opens the token file of `server` (whose MCP endpoint is `url`) in `dir`. Reads refuse symlinks,
 * non-regular files, files over {@link MAX_OAUTH_FILE_BYTES} and files other users can access;
 * writes go to a fresh 0600 file that replaces the old one atomically.
 */
export function createOAuthStore(dir: string, server: string, url: string): OAuthStore {
  const path = join(dir, oauthFileName(server));
  let writing: Promise<void> = Promise.resolve();

  async function read(): Promise<OAuthRecord> {
    try {
      const stat = await lstat(dir);
      if (stat.isSymbolicLink() || !stat.isDirectory()) throw storeError(`refused the OAuth token directory ${dir}: it is a symlink or not a directory`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyRecord(server, url);
      throw error;
    }
    let handle;
    try {
      handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return emptyRecord(server, url);
      if (code === 'ELOOP' || code === 'EMLINK') throw storeError(`refused the OAuth token file ${path}: it is a symlink`, error);
      throw storeError(`cannot read the OAuth token file ${path}: ${(error as Error).message}`, error);
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw storeError(`refused the OAuth token file ${path}: not a regular file`);
      if (stat.size > MAX_OAUTH_FILE_BYTES) throw storeError(`refused the OAuth token file ${path}: larger than ${MAX_OAUTH_FILE_BYTES} bytes`);
      if (!isWindows && (stat.mode & 0o077) !== 0) {
        throw storeError(`refused the OAuth token file ${path}: other users can access it (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 on it or capnode servers login ${server}`);
      }
      return parseRecord(await handle.readFile('utf8'), server, url, path);
    } finally {
      await handle.close();
    }
  }

  async function writeNow(record: OAuthRecord): Promise<void> {
    await ensureDir(dir);
    try {
      // The temporary file is created exclusively (never through a planted symlink); the rename replaces a link, not its target.
      await writePrivateFileAtomic(path, `${JSON.stringify({ ...record, server, url, version: 1 }, null, 2)}\n`);
    } catch (error) {
      throw storeError(`cannot write the OAuth token file ${path}: ${(error as Error).message}`, error);
    }
  }

  return {
    path,
    read,
    write(record) {
      const next = writing.then(() => writeNow(record));
      writing = next.catch(() => {});
      return next;
    },
    async remove() {
      await writing;
      await rm(path, { force: true });
    },
  };
}
