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
  /** ISO 8601 (exact): the last request that carried it, as the running host recorded it (written within a minute of the request). */
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

/** The store as read: every entry as it is in the file (what a write keeps), the ones accepted, and why the others are not. */
interface StoreRead {
  readonly raw: readonly unknown[];
  readonly tokens: readonly StoredToken[];
  /** One line per refused entry, naming it (position and name), never its token. */
  readonly problems: readonly string[];
}

/** How a problem names an entry: its position and name, never its token. */
function entryLabel(index: number, name: unknown): string {
  return `entry ${index + 1}${typeof name === 'string' && name !== '' ? ` (${JSON.stringify(name.slice(0, 64))})` : ' (no name)'}`;
}

/** Why a store entry is refused, or undefined when it is a token to accept (duplicates aside). */
function entryProblem(entry: unknown): string | undefined {
  if (!isPlainObject(entry)) return 'is not an object';
  if (!isTokenName(entry.name)) return "has no valid name (1-64 letters, digits, '.', '-' or '_', starting with a letter or digit)";
  if (entry.name === DEFAULT_TOKEN_NAME) return `is named '${DEFAULT_TOKEN_NAME}', the name of the mcp-token file's token; rename it (capnode token add <name> makes a new one)`;
  if (typeof entry.token !== 'string' || entry.token.length === 0) return 'has no token';
  if (typeof entry.created !== 'string') return 'has no "created" time';
  return undefined;
}

/**
 * Reads `mcp-tokens.json`. A short token refuses the whole file (a HostError naming the entry); any
 * other bad entry is refused alone and reported in `problems`: one that is not an object, has a bad
 * name, no token or no `created`, is named `default`, or repeats a name — the first entry of a name
 * in the file keeps it, every later one is refused, so one name never stands for two tokens.
 */
function inspectStore(paths: HostPaths): StoreRead {
  const path = storePath(paths);
  const value = readPrivateJson(path, 'the client token file');
  if (value === undefined) return { raw: [], tokens: [], problems: [] };
  const raw = isPlainObject(value) && Array.isArray(value.tokens) ? (value.tokens as unknown[]) : undefined;
  if (raw === undefined) throw new HostError('io', `${path} has no "tokens" list; fix it or remove it (its tokens stop working)`);
  // A hand-edited short token would be accepted as a bearer credential: refuse the file instead.
  for (const entry of raw) {
    if (isPlainObject(entry) && typeof entry.token === 'string' && entry.token.length > 0 && entry.token.length < MIN_TOKEN_LENGTH) {
      throw new HostError('io', `${path}: the token ${JSON.stringify(entry.name)} is shorter than ${MIN_TOKEN_LENGTH} characters, too weak to accept; remove it (capnode token add makes strong ones)`);
    }
  }
  const tokens: StoredToken[] = [];
  const problems: string[] = [];
  const firstAt = new Map<string, number>();
  raw.forEach((entry, index) => {
    const name = isPlainObject(entry) ? entry.name : undefined;
    const problem = entryProblem(entry);
    const taken = typeof name === 'string' ? firstAt.get(name) : undefined;
    if (problem !== undefined) problems.push(`${path}: ${entryLabel(index, name)} ${problem}; it is not accepted`);
    else if (taken !== undefined) problems.push(`${path}: ${entryLabel(index, name)} repeats the name of entry ${taken + 1}; only the first entry of a name is accepted — rename or remove this one`);
    else {
      firstAt.set(name as string, index);
      tokens.push(entry as unknown as StoredToken);
    }
  });
  return { raw, tokens, problems };
}

function readStore(paths: HostPaths): readonly StoredToken[] {
  return inspectStore(paths).tokens;
}

/** Where the reading of the token files reports an entry it refused (never a token). */
export interface TokenWarnings {
  readonly onWarning?: (message: string) => void;
}

async function writeStore(paths: HostPaths, tokens: readonly unknown[]): Promise<void> {
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
  const token = check.state === 'ok' ? check.text.trim() || undefined : undefined;
  // As in mcp-tokens.json: a hand-written short token would be a guessable bearer credential.
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
    throw new HostError('io', `${paths.mcpToken}: the token is shorter than ${MIN_TOKEN_LENGTH} characters, too weak to accept; replace it with a strong one: capnode token rotate (or delete the file: capnode serve makes a new one)`);
  }
  return token;
}

/**
 * Every token the MCP listener accepts: `default` (the `mcp-token` file, as before named tokens
 * existed, so existing client configs keep working) and each named one of `mcp-tokens.json`.
 */
export function readAcceptedTokens(paths: HostPaths, options: TokenWarnings = {}): AcceptedToken[] {
  const accepted: AcceptedToken[] = [];
  const fallback = readDefaultToken(paths);
  if (fallback !== undefined) accepted.push({ name: DEFAULT_TOKEN_NAME, token: fallback });
  const store = inspectStore(paths);
  for (const problem of store.problems) options.onWarning?.(problem);
  for (const entry of store.tokens) accepted.push({ name: entry.name, token: entry.token });
  return accepted;
}

/** Every client token, `default` first, with when it was made and last used; never a value. Refused entries go to `onWarning`. */
export function listClientTokens(paths: HostPaths, options: TokenWarnings = {}): ClientTokenInfo[] {
  const usage = readUsage(paths);
  const infos: ClientTokenInfo[] = [];
  if (readDefaultToken(paths) !== undefined) {
    const created = statSync(paths.mcpToken).mtime.toISOString();
    infos.push({ name: DEFAULT_TOKEN_NAME, created, ...(usage[DEFAULT_TOKEN_NAME] ? { lastUsed: usage[DEFAULT_TOKEN_NAME] } : {}) });
  }
  const store = inspectStore(paths);
  for (const problem of store.problems) options.onWarning?.(problem);
  for (const entry of store.tokens) infos.push({ name: entry.name, created: entry.created, ...(usage[entry.name] ? { lastUsed: usage[entry.name] } : {}) });
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
  await writeStore(paths, [...inspectStore(paths).raw, { name, token, created: new Date().toISOString() }]);
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
  // Every entry of that name goes, refused duplicates too; every other entry stays as it is.
  const { raw } = inspectStore(paths);
  const kept = raw.filter((entry) => !(isPlainObject(entry) && entry.name === name));
  if (kept.length === raw.length) return false;
  await writeStore(paths, kept);
  return true;
}

/** The usage file is written at most once per this interval per token (the time it holds is exact). */
const USAGE_WRITE_INTERVAL_MS = 60_000;

/** Records when each named token was last used; see {@link createTokenUsageRecorder}. */
export interface TokenUsageRecorder {
  /** A request authenticated with token `name`: cheap (a map update), never throws. */
  record(name: string): void;
  /** Writes the uses still waiting for their minute, then ignores further ones. */
  close(): Promise<void>;
}

/**
 * A recorder of token use for the running host. It keeps the exact time (ISO 8601, to the millisecond)
 * of each token's last request and writes the usage file (0600, atomic) at most once a minute per
 * token: a use within a minute of the last write is written when that minute is over (a timer that
 * does not hold the process open) or when the recorder closes, whichever comes first.
 */
export function createTokenUsageRecorder(paths: HostPaths, onError: (message: string) => void): TokenUsageRecorder {
  const written = new Map<string, number>();
  const latest = new Map<string, number>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  let writing: Promise<void> = Promise.resolve();
  let closed = false;
  const write = (name: string) => {
    const time = latest.get(name);
    if (time === undefined) return;
    written.set(name, Date.now());
    writing = writing.then(async () => {
      try {
        await writePrivateFileAtomic(usagePath(paths), `${JSON.stringify({ ...readUsage(paths), [name]: new Date(time).toISOString() })}\n`);
      } catch (error) {
        onError(`cannot record when the '${name}' token was last used: ${(error as Error).message}`);
      }
    });
  };
  return {
    record(name) {
      if (closed) return;
      const now = Date.now();
      latest.set(name, now);
      if (timers.has(name)) return;
      const wait = (written.get(name) ?? -Infinity) + USAGE_WRITE_INTERVAL_MS - now;
      if (wait <= 0) {
        write(name);
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(name);
        write(name);
      }, wait);
      timer.unref?.();
      timers.set(name, timer);
    },
    async close() {
      if (closed) return writing;
      closed = true;
      for (const [name, timer] of timers) {
        clearTimeout(timer);
        write(name);
      }
      timers.clear();
      await writing;
    },
  };
}
