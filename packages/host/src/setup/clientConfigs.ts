import { chmod, copyFile, readFile, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { createSecretScrubber } from '@capnode/mcp-client/redact';
import { isPlainObject } from '@capnode/toolkit';
import { writePrivateFileAtomic } from '@capnode/toolkit/node';
import { CLIENT_IDS, type ClientId, type ClientTarget } from './clientTarget.js';
import { HostError } from '../errors.js';

// The subpath's callers (the CLI) tell a refused file from other failures without loading the root entry.
export { HostError, isHostError } from '../errors.js';
export type { HostErrorCode } from '../errors.js';
import { unifiedDiff } from '../files/textDiff.js';

export { CLIENT_IDS, type ClientId, type ClientTarget } from './clientTarget.js';

/**
 * True when `id`'s config holds the MCP token itself (Claude Code, Cursor): such a client gets a token
 * of its own, named after it. Claude Desktop runs `capnode mcp` and VS Code prompts for the token.
 */
export function clientHoldsToken(id: ClientId): boolean {
  return id === 'claude' || id === 'cursor';
}

/** True when `value` is a {@link ClientId}. */
export function isClientId(value: unknown): value is ClientId {
  return typeof value === 'string' && (CLIENT_IDS as readonly string[]).includes(value);
}

/** How the client starts `capnode mcp` (stdio clients such as Claude Desktop). */
export interface StdioLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** Where this machine keeps things: the platform, the user's home and environment (all injectable for tests). */
export interface ClientPlatformOptions {
  readonly platform?: NodeJS.Platform;
  /** The user's home directory. Default `os.homedir()`. */
  readonly userHome?: string;
  /** For `APPDATA` and `XDG_CONFIG_HOME`. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The project directory whose `.mcp.json` / `.vscode/mcp.json` are scanned. Default `process.cwd()`. */
  readonly cwd?: string;
}

/** What a snippet points at: this host. */
export interface ClientConfigOptions extends ClientPlatformOptions {
  /** The host's MCP endpoint, e.g. `http://127.0.0.1:8765/`. */
  readonly url: string;
  /** The MCP bearer token (HTTP clients get it as an `Authorization` header). */
  readonly token: string;
  /** The entry's name in the client's config. Default `capnode`. */
  readonly serverName?: string;
  /** How a stdio client starts the host; default this process's Node and script with `mcp`. */
  readonly launch?: StdioLaunch;
  /**
   * The tool name style the entry selects (`?toolNames=` on the URL, `--tool-names` for `capnode mcp`).
   * Default: what the client accepts — `underscore` for Cursor and VS Code (they take only letters,
   * digits, `_` and `-` in tool names), none for the Claude clients (they take dotted names, so the
   * host's `mcp.toolNames` applies).
   */
  readonly toolNames?: 'dotted' | 'underscore';
  readonly signal?: AbortSignal;
}

/** A client's ready config: the JSON to merge, where it goes, and how to say so. */
export interface ClientSnippet {
  readonly id: ClientId;
  readonly name: string;
  /** The JSON object a user merges into the config file (`mcpServers` or, for VS Code, `servers` + `inputs`). */
  readonly snippet: Record<string, unknown>;
  /** Lines for people: where the snippet goes, what it does (with `command`: the first line introduces it). */
  readonly instructions: readonly string[];
  /** A command that configures the client instead (Claude Code: `claude mcp add …`), as argv. */
  readonly command?: readonly string[];
}

/** A client config file found on this machine and its MCP entries. */
export interface ClientConfigFile {
  readonly id: ClientId;
  readonly path: string;
  /** `unreadable`: the file exists but is not JSON (the message says why). */
  readonly state: 'ok' | 'unreadable';
  readonly error?: string;
  /** Every MCP server entry: its name and whether it points at this host's URL or runs `capnode mcp`. */
  readonly entries: readonly ClientConfigEntry[];
}

/** One MCP server entry of a client config file. */
export interface ClientConfigEntry {
  readonly name: string;
  /** Its URL is this host's endpoint, or it runs `capnode mcp`. */
  readonly pointsHere: boolean;
  readonly url?: string;
  /** With a token to compare: whether its `Authorization` header carries it (absent when it has no such header, e.g. VS Code's input prompt). */
  readonly tokenCurrent?: boolean;
}

/** What `writeClientConfig` would change: the file, the before and after text, a masked unified diff. */
export interface ClientConfigPreview {
  readonly id: ClientId;
  readonly path: string;
  /** The file does not exist yet. */
  readonly created: boolean;
  /** False when the file already holds exactly this entry. */
  readonly changed: boolean;
  /** Unified diff, secrets (the token, credential shapes in other entries) masked. */
  readonly diff: string;
  /** The current text ('' for a new file); pass it back as `expected` so a concurrent edit is not overwritten. */
  readonly before: string;
  readonly after: string;
}

export interface WriteClientConfigOptions extends ClientConfigOptions {
  /** The `before` text of the preview the user confirmed; the write refuses (`conflict`) if the file changed since. */
  readonly expected?: string;
  /** Clock for the backup name (tests). */
  readonly now?: () => Date;
}

/** The result of a write: the file and the backup of its previous content (absent for a new file or no change). */
export interface ClientConfigWrite {
  readonly id: ClientId;
  readonly path: string;
  readonly backup?: string;
  readonly changed: boolean;
  /** The file's mode before, when the write narrowed it to owner-only (it holds capnode's token). */
  readonly narrowedFrom?: number;
  /**
   * Why the written file is not owner-only although it holds the token (a file system that keeps no
   * modes, a file another user owns): the user is told, so they can move it or revoke the token.
   */
  readonly notPrivate?: string;
}

const NAMES: Readonly<Record<ClientId, string>> = { claude: 'Claude Code', 'claude-desktop': 'Claude Desktop', cursor: 'Cursor', vscode: 'VS Code' };

interface Platform {
  readonly platform: NodeJS.Platform;
  readonly home: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

function platformOf(options: ClientPlatformOptions): Platform {
  return { platform: options.platform ?? process.platform, home: options.userHome ?? homedir(), env: options.env ?? process.env, cwd: options.cwd ?? process.cwd() };
}

/** The per-user application data directory: `%APPDATA%`, `~/Library/Application Support`, `$XDG_CONFIG_HOME` or `~/.config`. */
function appData(p: Platform): string {
  if (p.platform === 'win32') return p.env.APPDATA || join(p.home, 'AppData', 'Roaming');
  if (p.platform === 'darwin') return join(p.home, 'Library', 'Application Support');
  return p.env.XDG_CONFIG_HOME || join(p.home, '.config');
}

/**
 * The config file `writeClientConfig` writes for `id` on this platform: Claude Code `~/.claude.json`
 * (user scope), Claude Desktop `claude_desktop_config.json` in the application data directory,
 * Cursor `~/.cursor/mcp.json`, VS Code the user `mcp.json` (`Code/User/mcp.json`).
 */
export function clientConfigPath(id: ClientId, options: ClientPlatformOptions = {}): string {
  const p = platformOf(options);
  switch (id) {
    case 'claude':
      return join(p.home, '.claude.json');
    case 'claude-desktop':
      return join(appData(p), 'Claude', 'claude_desktop_config.json');
    case 'cursor':
      return join(p.home, '.cursor', 'mcp.json');
    case 'vscode':
      return join(appData(p), 'Code', 'User', 'mcp.json');
  }
}

/** Every file of `id` that may hold MCP servers: the written one, plus project and legacy locations. */
function candidateFiles(id: ClientId, p: Platform): string[] {
  const main = clientConfigPath(id, { platform: p.platform, userHome: p.home, env: p.env });
  switch (id) {
    case 'claude':
      return [main, join(p.cwd, '.mcp.json')];
    case 'cursor':
      return [main, join(p.cwd, '.cursor', 'mcp.json')];
    case 'vscode':
      return [main, join(appData(p), 'Code', 'User', 'settings.json'), join(p.cwd, '.vscode', 'mcp.json')];
    default:
      return [main];
  }
}

/** The tool name style each client needs selected; `undefined`: it takes dotted names (the host's setting applies). */
const CLIENT_TOOL_NAMES: Readonly<Record<ClientId, 'underscore' | undefined>> = { claude: undefined, 'claude-desktop': undefined, cursor: 'underscore', vscode: 'underscore' };

function toolNamesFor(id: ClientId, options: ClientConfigOptions): 'dotted' | 'underscore' | undefined {
  return options.toolNames ?? CLIENT_TOOL_NAMES[id];
}

/** The host's URL as `id`'s entry holds it: with `?toolNames=` when the client needs a style selected. */
function entryUrl(id: ClientId, options: ClientConfigOptions): string {
  const style = toolNamesFor(id, options);
  if (style === undefined) return options.url;
  const url = new URL(options.url);
  url.searchParams.set('toolNames', style);
  return url.toString();
}

function defaultLaunch(): StdioLaunch {
  const script = process.argv[1];
  return script ? { command: process.execPath, args: [script, 'mcp'] } : { command: 'capnode', args: ['mcp'] };
}

/** The entry `id`'s config gets for this host (without the surrounding `mcpServers` / `servers`). */
function entryFor(id: ClientId, options: ClientConfigOptions): Record<string, unknown> {
  const authorization = `Bearer ${options.token}`;
  switch (id) {
    case 'claude':
      return { type: 'http', url: entryUrl(id, options), headers: { Authorization: authorization } };
    case 'claude-desktop': {
      const launch = options.launch ?? defaultLaunch();
      const style = toolNamesFor(id, options);
      const args = style === undefined ? [...launch.args] : [...launch.args, '--tool-names', style];
      return { command: launch.command, args, ...(launch.env ? { env: { ...launch.env } } : {}) };
    }
    case 'cursor':
      return { url: entryUrl(id, options), headers: { Authorization: authorization } };
    case 'vscode':
      return { type: 'http', url: entryUrl(id, options), headers: { Authorization: `Bearer \${input:${serverName(options)}-token}` } };
  }
}

function serverName(options: { serverName?: string }): string {
  return options.serverName ?? 'capnode';
}

function vscodeInput(name: string): Record<string, unknown> {
  return { type: 'promptString', id: `${name}-token`, description: 'capnode MCP token (capnode token show)', password: true };
}

/**
 * The ready config for `id`, as `capnode config <id>` prints it and the dashboard shows it: Claude
 * Code and Cursor get the URL with the `Authorization` header, Claude Desktop a stdio entry running
 * `capnode mcp` (no token needed), VS Code an `inputs` prompt so the file holds no secret.
 */
export function clientSnippet(id: ClientId, options: ClientConfigOptions): ClientSnippet {
  const name = serverName(options);
  const entry = entryFor(id, options);
  const path = clientConfigPath(id, options);
  switch (id) {
    case 'claude':
      return {
        id,
        name: NAMES[id],
        snippet: { mcpServers: { [name]: entry } },
        command: ['claude', 'mcp', 'add', '--transport', 'http', name, entryUrl(id, options), '--header', `Authorization: Bearer ${options.token}`],
        instructions: ['Claude Code: run this command once', `or put this in .mcp.json (project) or ${path} (keep the token out of version control)`],
      };
    case 'claude-desktop':
      return {
        id,
        name: NAMES[id],
        snippet: { mcpServers: { [name]: entry } },
        instructions: [
          `Claude Desktop: merge into ${path}`,
          'Claude Desktop starts local servers over stdio, so this runs `capnode mcp`: the same',
          'capabilities, settings and exec approvals as the HTTP host, no token needed.',
        ],
      };
    case 'cursor':
      return { id, name: NAMES[id], snippet: { mcpServers: { [name]: entry } }, instructions: [`Cursor: merge into ${path} (or .cursor/mcp.json in a project you do not commit)`] };
    case 'vscode':
      return {
        id,
        name: NAMES[id],
        snippet: { servers: { [name]: entry }, inputs: [vscodeInput(name)] },
        instructions: [
          `VS Code: merge into ${path} (user) or .vscode/mcp.json (workspace); VS Code asks for the token once and stores it securely,`,
          'so the file holds no secret. Paste the token from: capnode token show',
        ],
      };
  }
}

/** Parses a config file's text; `{}` for an empty file. A HostError `invalid_config` names the file and leaves it alone. */
function parseConfig(text: string, path: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HostError(
      'invalid_config',
      `cannot parse ${path}: ${(error as Error).message} (comments and trailing commas are not supported) — fix the file, or add the entry by hand; it was not changed`,
      { cause: error },
    );
  }
  if (!isPlainObject(value)) throw new HostError('invalid_config', `${path} does not hold a JSON object — fix the file, or add the entry by hand; it was not changed`);
  return value;
}

/** The indentation the file already uses (two spaces by default). */
function indentOf(text: string): string | number {
  const match = /^[{[]\s*\n([ \t]+)\S/.exec(text);
  return match ? match[1]! : 2;
}

/**
 * `text` with this host's entry set in the section the client reads (`mcpServers`, or `servers` and
 * `inputs` for VS Code); every other entry and every unknown key is kept, in order.
 */
export function mergeClientConfig(id: ClientId, text: string, options: ClientConfigOptions & { path?: string }): string {
  const config = parseConfig(text, options.path ?? clientConfigPath(id, options));
  const name = serverName(options);
  const key = id === 'vscode' ? 'servers' : 'mcpServers';
  const section = config[key];
  if (section !== undefined && !isPlainObject(section)) throw new HostError('invalid_config', `"${key}" in ${options.path ?? 'the file'} is not an object — fix the file; it was not changed`);
  const merged: Record<string, unknown> = { ...config, [key]: { ...section, [name]: entryFor(id, options) } };
  if (id === 'vscode') {
    const inputs = config.inputs;
    if (inputs !== undefined && !Array.isArray(inputs)) throw new HostError('invalid_config', `"inputs" in ${options.path ?? 'the file'} is not an array — fix the file; it was not changed`);
    const input = vscodeInput(name);
    const list = (inputs ?? []) as unknown[];
    merged.inputs = list.some((item) => isPlainObject(item) && item.id === input.id) ? list : [...list, input];
  }
  const after = `${JSON.stringify(merged, null, indentOf(text))}\n`;
  // Unchanged content stays byte for byte (no rewrite just to reformat).
  return text.trim() !== '' && sameJson(text, after) ? text : after;
}

function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HostError('io', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** The file to write: a symlinked config (dotfile managers) is written through, at its target. */
async function resolveTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

/** Throws the signal's reason (an `AbortError` by default) once it is aborted, as Node's own APIs do. */
function aborted(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
}

/**
 * What writing `id`'s config would change, without writing: the file, whether it is new, and a
 * unified diff with the token and other credentials masked. Throws `invalid_config` for a file that
 * is not JSON (it is never touched).
 */
export async function previewClientConfig(id: ClientId, options: ClientConfigOptions): Promise<ClientConfigPreview> {
  aborted(options.signal);
  const path = await resolveTarget(clientConfigPath(id, options));
  const existing = await readIfExists(path);
  const before = existing ?? '';
  const after = mergeClientConfig(id, before, { ...options, path });
  const scrub = createSecretScrubber([options.token]);
  const raw = unifiedDiff(before, after, { from: existing === undefined ? '/dev/null' : path, to: path });
  return { id, path, created: existing === undefined, changed: after !== before, diff: scrub(raw), before, after };
}

function backupName(path: string, now: Date): string {
  return `${path}.capnode-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
}

/**
 * Merges this host's entry into `id`'s config file: refuses a file it cannot parse
 * (`invalid_config`) or one that changed since the preview (`conflict`, with `expected`), copies the
 * old file to `<file>.capnode-backup-<time>` (0600), then writes atomically, owner-only: 0600 for a new
 * file, the old mode without group and other bits otherwise (the entry holds the token; `narrowedFrom`
 * says when that changed the mode). Other entries and unknown keys are kept.
 */
export async function writeClientConfig(id: ClientId, options: WriteClientConfigOptions): Promise<ClientConfigWrite> {
  const preview = await previewClientConfig(id, options);
  if (options.expected !== undefined && options.expected !== preview.before) {
    throw new HostError('conflict', `${preview.path} changed since it was shown — look at the new diff and confirm again; nothing was written`);
  }
  if (!preview.changed) return { id, path: preview.path, changed: false };
  aborted(options.signal);
  let backup: string | undefined;
  let before: number | undefined;
  let mode = 0o600;
  try {
    if (!preview.created) {
      before = (await stat(preview.path)).mode & 0o777;
      // The entry carries the bearer token: group and others lose every bit; the owner keeps theirs.
      mode = (before & 0o700) | 0o600;
      backup = backupName(preview.path, options.now?.() ?? new Date());
      await copyFile(preview.path, backup);
      await chmod(backup, 0o600);
    }
    await writePrivateFileAtomic(preview.path, preview.after, { mode });
  } catch (error) {
    throw new HostError('io', `cannot write ${preview.path}: ${(error as Error).message}; ${backup ? `the previous file is kept in ${basename(backup)}` : 'nothing was written'}`, { cause: error });
  }
  const notPrivate = await privacyProblem(preview.path);
  return {
    id,
    path: preview.path,
    changed: true,
    ...(backup ? { backup } : {}),
    ...(before !== undefined && before !== mode ? { narrowedFrom: before } : {}),
    ...(notPrivate === undefined ? {} : { notPrivate }),
  };
}

/** Why `path`, just written owner-only, is not (another owner, group or other bits the file system kept); `undefined` when it is, and on Windows (the profile's ACL protects it). */
async function privacyProblem(path: string): Promise<string | undefined> {
  if (process.platform === 'win32') return undefined;
  let info;
  try {
    info = await stat(path);
  } catch {
    return undefined;
  }
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) return `it is owned by another user (uid ${info.uid}), who can read the token`;
  if ((info.mode & 0o077) !== 0) return `its file system keeps mode 0${(info.mode & 0o777).toString(8)} (group or others can read the token)`;
  return undefined;
}

function sameEndpoint(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    const host = (name: string) => (name === 'localhost' ? '127.0.0.1' : name);
    return host(x.hostname) === host(y.hostname) && (x.port || '80') === (y.port || '80') && x.pathname.replace(/\/$/, '') === y.pathname.replace(/\/$/, '');
  } catch {
    return false;
  }
}

function pointsHere(entry: unknown, url: string | undefined, token: string | readonly string[] | undefined): Omit<ClientConfigEntry, 'name'> {
  if (!isPlainObject(entry)) return { pointsHere: false };
  if (typeof entry.url === 'string') {
    const headers = isPlainObject(entry.headers) ? entry.headers : {};
    const authorization = Object.entries(headers).find(([key]) => key.toLowerCase() === 'authorization')?.[1];
    const checkable = token !== undefined && typeof authorization === 'string' && !authorization.includes('${');
    const current = (typeof token === 'string' ? [token] : (token ?? [])).some((value) => authorization === `Bearer ${value}`);
    return { pointsHere: url !== undefined && sameEndpoint(entry.url, url), url: entry.url, ...(checkable ? { tokenCurrent: current } : {}) };
  }
  const argv = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].filter((part): part is string => typeof part === 'string');
  // The CLI (`capnode`, its package's bin.js) or the tray's bin, which serves `mcp` too (`capnode-tray mcp`).
  const capnode = argv.some((part) => /(?:^|[\\/])capnode(?:-tray)?(?:\.cmd|\.exe)?$|[\\/]capnode[\\/].*bin\.js$|@capnode[\\/]tray[\\/]dist[\\/]bin\.js$|apps[\\/](?:cli|tray)[\\/]dist[\\/]bin\.js$/.test(part));
  return { pointsHere: capnode && argv.includes('mcp') };
}

function entriesOf(id: ClientId, path: string, config: Record<string, unknown>): unknown {
  if (id === 'vscode') return basename(path) === 'settings.json' ? (isPlainObject(config.mcp) ? config.mcp.servers : undefined) : config.servers;
  return config.mcpServers;
}

/**
 * The client config files on this machine (every location `id` reads, those that exist) and their
 * MCP entries, each marked when it points at `url` (or runs `capnode mcp`), and with `token` (one, or
 * every token the host accepts) whether its `Authorization` header carries one. Never throws for a bad
 * file: it is listed as `unreadable`.
 */
export async function findClientConfigs(
  options: ClientPlatformOptions & { url?: string; token?: string | readonly string[]; ids?: readonly ClientId[]; signal?: AbortSignal } = {},
): Promise<ClientConfigFile[]> {
  const p = platformOf(options);
  const files: ClientConfigFile[] = [];
  for (const id of options.ids ?? CLIENT_IDS) {
    for (const path of candidateFiles(id, p)) {
      aborted(options.signal);
      let text: string | undefined;
      try {
        text = await readIfExists(path);
      } catch (error) {
        files.push({ id, path, state: 'unreadable', error: (error as Error).message, entries: [] });
        continue;
      }
      if (text === undefined) continue;
      try {
        const servers = entriesOf(id, path, parseConfig(text, path));
        const entries = isPlainObject(servers) ? Object.entries(servers).map(([name, entry]) => ({ name, ...pointsHere(entry, options.url, options.token) })) : [];
        files.push({ id, path, state: 'ok', entries });
      } catch (error) {
        files.push({ id, path, state: 'unreadable', error: (error as Error).message, entries: [] });
      }
    }
  }
  return files;
}

/** Every client with its snippet, the file `writeClientConfig` writes, and whether it already points at this host. */
export async function listClientTargets(options: ClientConfigOptions): Promise<ClientTarget[]> {
  const found = await findClientConfigs(options);
  return CLIENT_IDS.map((id) => ({
    id,
    name: NAMES[id],
    configPath: clientConfigPath(id, options),
    configured: found.some((file) => file.id === id && file.entries.some((entry) => entry.pointsHere)),
    snippet: clientSnippet(id, options).snippet,
  }));
}
