import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { isPlainObject } from '@capnode/toolkit';
import { createPrivateFileExclusive, readPrivateFileSync, writePrivateFileAtomic } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';
import type { HostPaths } from './paths.js';

/** The name the token in `mcp-token` (the one capnode always had) goes by. */
export const DEFAULT_TOKEN_NAME = 'default';

/** A client token as listed: never its value. */
export interface ClientTokenInfo {
  readonly name: string;
  /** ISO 8601: when it was made (for `default`: when `mcp-token` was last written). */
  readonly created: string;
  /** ISO 8601, to the minute: the last request that carried it, as the running host recorded it. */
  readonly lastUsed?: string;
}

/** A token a listener accepts, and the name its calls are attributed to. */
export interface AcceptedToken {
  readonly name: string;
  readonly token: string;
}

interface StoredToken {
  readonly name: string;
  readonly token: string;
  readonly created: string;
}

/** 1-64 letters, digits, `.`, `-` or `_`, starting with a letter or digit: a client name every config format takes. */
const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** True when `value` can name a client token. */
export function isTokenName(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_NAME.test(value);
}

/** The shortest token accepted from `mcp-tokens.json` (those made here are 43: 32 random bytes, base64url). */
const MIN_TOKEN_LENGTH = 32;

/** The file of the named tokens (0600, beside `mcp-token`), and the one the host records last use in. */
function storePath(paths: HostPaths): string {
  return join(paths.home, 'mcp-tokens.json');
}

function usagePath(paths: HostPaths): string {
  return join(paths.home, 'mcp-tokens-used.json');
}

/** Reads a private JSON file of the config directory: `undefined` when missing; insecure or unparsable files are HostErrors. */
function readPrivateJson(path: string, label: string): unknown {
  let check;
  try {
    check = readPrivateFileSync(path, { label, exposed: 'refuse' });
  } catch (error) {
    throw new HostError('io', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (check.state === 'missing') return undefined;
  if (check.state === 'insecure') throw new HostError('insecure_file', check.message);
  try {
    return JSON.parse(check.text);
  } catch {
    throw new HostError('io', `${path} is not valid JSON; fix it or remove it (its tokens stop working)`);
  }
}

function readStore(paths: HostPaths): StoredToken[] {
  const value = readPrivateJson(storePath(paths), 'the client token file');
  if (value === undefined) return [];
  const tokens = isPlainObject(value) && Array.isArray(value.tokens) ? value.tokens : undefined;
  if (tokens === undefined) throw new HostError('io', `${storePath(paths)} has no "tokens" list; fix it or remove it (its tokens stop working)`);
  // A hand-edited short token would be accepted as a bearer credential: refuse the file instead.
  for (const entry of tokens) {
    if (isPlainObject(entry) && typeof entry.token === 'string' && entry.token.length > 0 && entry.token.length < MIN_TOKEN_LENGTH) {
      throw new HostError('io', `${storePath(paths)}: the token ${JSON.stringify(entry.name)} is shorter than ${MIN_TOKEN_LENGTH} characters, too weak to accept; remove it (capnode token add makes strong ones)`);
    }
  }
  return tokens.filter(
    (entry): entry is StoredToken => isPlainObject(entry) && isTokenName(entry.name) && typeof entry.token === 'string' && entry.token.length > 0 && typeof entry.created === 'string',
  );
}

async function writeStore(paths: HostPaths, tokens: readonly StoredToken[]): Promise<void> {
  try {
    await writePrivateFileAtomic(storePath(paths), `${JSON.stringify({ version: 1, tokens }, null, 2)}\n`);
  } catch (error) {
    throw new HostError('io', `cannot write ${storePath(paths)}: ${(error as Error).message}`, { cause: error });
  }
}

function readUsage(paths: HostPaths): Record<string, string> {
  let value: unknown;
  try {
    value = readPrivateJson(usagePath(paths), 'the token usage file');
  } catch {
    return {};
  }
  if (!isPlainObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** The default token's value, from `mcp-token`; `undefined` when it was never made. */
function readDefaultToken(paths: HostPaths): string | undefined {
  let check;
  try {
    check = readPrivateFileSync(paths.mcpToken, { label: 'the token file', exposed: 'refuse' });
  } catch (error) {
    throw new HostError('io', `cannot read ${paths.mcpToken}: ${(error as Error).message}`, { cause: error });
  }
  if (check.state === 'insecure') throw new HostError('insecure_file', check.message);
  return check.state === 'ok' ? check.text.trim() || undefined : undefined;
}

/**
 * Every token the MCP listener accepts: `default` (the `mcp-token` file, as before named tokens
 * existed, so existing client configs keep working) and each named one of `mcp-tokens.json`.
 */
export function readAcceptedTokens(paths: HostPaths): AcceptedToken[] {
  const accepted: AcceptedToken[] = [];
  const fallback = readDefaultToken(paths);
  if (fallback !== undefined) accepted.push({ name: DEFAULT_TOKEN_NAME, token: fallback });
  for (const entry of readStore(paths)) accepted.push({ name: entry.name, token: entry.token });
  return accepted;
}

/** Every client token, `default` first, with when it was made and last used; never a value. */
export function listClientTokens(paths: HostPaths): ClientTokenInfo[] {
  const usage = readUsage(paths);
  const infos: ClientTokenInfo[] = [];
  if (readDefaultToken(paths) !== undefined) {
    const created = statSync(paths.mcpToken).mtime.toISOString();
    infos.push({ name: DEFAULT_TOKEN_NAME, created, ...(usage[DEFAULT_TOKEN_NAME] ? { lastUsed: usage[DEFAULT_TOKEN_NAME] } : {}) });
  }
  for (const entry of readStore(paths)) infos.push({ name: entry.name, created: entry.created, ...(usage[entry.name] ? { lastUsed: usage[entry.name] } : {}) });
  return infos;
}

/** The value of the token named `name`, if there is one. */
export function readClientToken(paths: HostPaths, name: string): string | undefined {
  if (name === DEFAULT_TOKEN_NAME) return readDefaultToken(paths);
  return readStore(paths).find((entry) => entry.name === name)?.token;
}

function checkName(name: string): void {
  if (!isTokenName(name)) {
    throw new HostError('invalid_config', `a token name is 1-64 letters, digits, '.', '-' or '_', starting with a letter or digit; got ${JSON.stringify(name)}`);
  }
}

/**
 * The token named `name`, made (32 random bytes) when there is none yet: one token per client, so
 * its calls carry the client's name. `default` is the `mcp-token` file's, made there if missing.
 */
export async function ensureClientToken(paths: HostPaths, name: string): Promise<{ token: string; created: boolean }> {
  checkName(name);
  const existing = readClientToken(paths, name);
  if (existing !== undefined) return { token: existing, created: false };
  const token = randomBytes(32).toString('base64url');
  if (name === DEFAULT_TOKEN_NAME) {
    if (await createPrivateFileExclusive(paths.mcpToken, `${token}\n`)) return { token, created: true };
    return { token: readDefaultToken(paths) ?? token, created: false };
  }
  await writeStore(paths, [...readStore(paths), { name, token, created: new Date().toISOString() }]);
  return { token, created: true };
}

/** Makes a new token named `name` and returns its value; a name already in use is HostError `conflict`. */
export async function addClientToken(paths: HostPaths, name: string): Promise<string> {
  checkName(name);
  if (readClientToken(paths, name) !== undefined) {
    throw new HostError('conflict', `a token named '${name}' already exists; revoke it first (capnode token revoke ${name}) or pick another name`);
  }
  return (await ensureClientToken(paths, name)).token;
}

/**
 * Removes the token named `name` from the file; `false` when there was none. `default` is not
 * revoked here (HostError `invalid_config`): rotate it instead, so a token for old configs always exists.
 */
export async function revokeClientToken(paths: HostPaths, name: string): Promise<boolean> {
  if (name === DEFAULT_TOKEN_NAME) {
    throw new HostError('invalid_config', "the 'default' token cannot be revoked (clients set up before named tokens use it); replace it with: capnode token rotate");
  }
  const tokens = readStore(paths);
  const kept = tokens.filter((entry) => entry.name !== name);
  if (kept.length === tokens.length) return false;
  await writeStore(paths, kept);
  return true;
}

/** How coarse "last used" is: a token's use is written at most once per this interval. */
const USAGE_RESOLUTION_MS = 60_000;

/**
 * A recorder of token use for the running host: cheap per request (a number compare), writes the
 * usage file (0600, atomic) at most once a minute per token, never throws.
 */
export function createTokenUsageRecorder(paths: HostPaths, onError: (message: string) => void): (name: string) => void {
  const seen = new Map<string, number>();
  let writing: Promise<void> = Promise.resolve();
  return (name) => {
    const now = Date.now();
    if (now - (seen.get(name) ?? 0) < USAGE_RESOLUTION_MS) return;
    seen.set(name, now);
    const time = new Date(now - (now % USAGE_RESOLUTION_MS)).toISOString();
    writing = writing.then(async () => {
      try {
        await writePrivateFileAtomic(usagePath(paths), `${JSON.stringify({ ...readUsage(paths), [name]: time })}\n`);
      } catch (error) {
        onError(`cannot record when the '${name}' token was last used: ${(error as Error).message}`);
      }
    });
  };
}
