import { readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readPrivateFileSync } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';
import { isPidAlive } from '../locks/lockFile.js';

/** Environment variable that overrides the config directory (tests and side-by-side instances). */
export const HOME_ENV = 'CAPNODE_HOME';

/** Environment variable holding the gateway's shared token (wins over `gateway.token` in settings.json). */
export const GATEWAY_TOKEN_ENV = 'CAPNODE_GATEWAY_TOKEN';
/** Loopback address the MCP listener binds by default. */
export const DEFAULT_MCP_HOST = '127.0.0.1';
/** Port the MCP listener binds by default. */
export const DEFAULT_MCP_PORT = 8765;

/** Every file the host keeps in its config directory. */
export interface HostPaths {
  /** The config directory itself. */
  readonly home: string;
  /** User settings (zod-validated JSON, 0600). */
  readonly settings: string;
  /** Bearer token MCP clients present (0600). */
  readonly mcpToken: string;
  /** Bearer token for the admin routes (approvals); never handed to MCP clients (0600). */
  readonly adminToken: string;
  /** Runtime state of the running HTTP host (URL, pid); exists only while it runs. */
  readonly runtime: string;
  /** Runtime state of stdio hosts (`capnode mcp`) and listener-less node hosts, one file each, so approvals reach them too. */
  readonly runDir: string;
  /** One JSON line per invocation, without argument values. */
  readonly auditLog: string;
  /** The host's log lines (scrubbed of secrets, rotated by size); `capnode logs` reads it. */
  readonly hostLog: string;
}

export interface ResolveHomeOptions {
  /** Explicit directory; wins over everything else. */
  readonly home?: string;
  /** Environment to read `CAPNODE_HOME`, `XDG_CONFIG_HOME` and `APPDATA` from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  /** The user's home directory. Default `os.homedir()`. */
  readonly userHome?: string;
}

/**
 * The host's config directory: `home`, else `CAPNODE_HOME`, else the platform default
 * (Linux `$XDG_CONFIG_HOME/capnode` or `~/.config/capnode`, macOS `~/Library/Application Support/capnode`,
 * Windows `%APPDATA%\capnode`).
 */
export function resolveHome(options: ResolveHomeOptions = {}): string {
  if (options.home) return options.home;
  const env = options.env ?? process.env;
  const override = env[HOME_ENV];
  if (override) return override;
  const platform = options.platform ?? process.platform;
  const user = options.userHome ?? homedir();
  if (platform === 'win32') return join(env.APPDATA || join(user, 'AppData', 'Roaming'), 'capnode');
  if (platform === 'darwin') return join(user, 'Library', 'Application Support', 'capnode');
  return join(env.XDG_CONFIG_HOME || join(user, '.config'), 'capnode');
}

/** The files of the config directory `home` (see {@link resolveHome}). */
export function hostPaths(home: string = resolveHome()): HostPaths {
  return {
    home,
    settings: join(home, 'settings.json'),
    mcpToken: join(home, 'mcp-token'),
    adminToken: join(home, 'admin-token'),
    runtime: join(home, 'host.json'),
    runDir: join(home, 'run'),
    auditLog: join(home, 'audit.log'),
    hostLog: join(home, 'logs', 'host.log'),
  };
}

/**
 * What a running host publishes so clients find it: `host.json` for the HTTP host (on a non-default
 * port too), `run/stdio-<pid>.json` for each stdio host (admin routes only).
 */
export interface RuntimeState {
  readonly pid: number;
  /** Random id of the host instance that wrote the file; only that instance removes it. */
  readonly instance?: string;
  /** `node`: a gateway node host running without the MCP listener (admin routes only). */
  readonly kind: 'http' | 'stdio' | 'node';
  /** MCP endpoint, e.g. `http://127.0.0.1:8765/`; absent for stdio hosts. */
  readonly url?: string;
  /** Admin endpoint base, e.g. `http://127.0.0.1:8765/_capnode/`. */
  readonly adminUrl: string;
  readonly startedAt: string;
  readonly version: string;
  /** The host's dashboard, e.g. `http://127.0.0.1:45123/`, while it listens (`capnode ui` signs in there). */
  readonly dashboardUrl?: string;
}

/**
 * Reads `host.json`; `undefined` when it is missing, unreadable, or left behind by a process that
 * no longer exists (a crashed host).
 */
export function readRuntimeState(path: string): RuntimeState | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const state = value as Partial<RuntimeState>;
  if (typeof state.pid !== 'number' || typeof state.adminUrl !== 'string') return undefined;
  if (!isPidAlive(state.pid)) return undefined;
  return state as RuntimeState;
}

/** Every live host of this config directory: the HTTP host first, then stdio hosts. */
export function listRuntimeStates(paths: HostPaths): RuntimeState[] {
  const states: RuntimeState[] = [];
  const http = readRuntimeState(paths.runtime);
  if (http) states.push(http);
  let names: string[] = [];
  try {
    names = readdirSync(paths.runDir);
  } catch {
    // No stdio host ever ran.
  }
  for (const name of names.filter((entry) => entry.endsWith('.json')).sort()) {
    const state = readRuntimeState(join(paths.runDir, name));
    if (state) states.push(state);
  }
  return states;
}

/**
 * The MCP URL a client should use without an explicit `--url`: the running host's (from `host.json`),
 * else the one `settings.json` configures, else `http://127.0.0.1:8765/`. Never throws; a settings
 * file that cannot be read is left for the host to report.
 */
export function defaultMcpUrl(paths: HostPaths): string {
  const running = readRuntimeState(paths.runtime);
  if (running?.url) return running.url;
  let host = DEFAULT_MCP_HOST;
  let port = DEFAULT_MCP_PORT;
  try {
    const settings = JSON.parse(readFileSync(paths.settings, 'utf8')) as { mcp?: { host?: unknown; port?: unknown } };
    if (typeof settings.mcp?.host === 'string') host = settings.mcp.host;
    if (typeof settings.mcp?.port === 'number' && settings.mcp.port > 0) port = settings.mcp.port;
  } catch {
    // Missing or invalid settings: the defaults apply; the host reports a bad file when it starts.
  }
  return formatUrl(host, port);
}

/** `http://host:port/` with IPv6 literals bracketed. */
export function formatUrl(host: string, port: number, path = '/'): string {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${bracketed}:${port}${path}`;
}

/**
 * Reads a token file (`mcp-token`, `admin-token`) the way the host does: `undefined` when it is
 * missing or empty; never through a symlink. A symlink, a non-regular or another user's file, or
 * one group or others can read is a {@link HostError} `insecure_file` whose message names the file
 * and the `chmod 600` fix. Other read errors count as missing.
 */
export function readTokenFile(path: string): string | undefined {
  let check;
  try {
    check = readPrivateFileSync(path, { label: 'the token file', exposed: 'refuse' });
  } catch {
    return undefined;
  }
  if (check.state === 'insecure') throw new HostError('insecure_file', check.message);
  return check.state === 'ok' ? check.text.trim() || undefined : undefined;
}
