import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StdioLaunch } from '../../setup/clientConfigs.js';
import { resolveHome } from '../../config/paths.js';

export interface CliLaunchOptions {
  /** The host's environment: `PATH` (and `PATHEXT`) to find `capnode`, `CAPNODE_HOME`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The host's config directory; passed on as `CAPNODE_HOME` unless it is the default one. */
  readonly home: string;
  /** The user's home directory (for the default config directory). */
  readonly userHome: string;
  readonly platform?: NodeJS.Platform;
  /** The script of this process (`process.argv[1]`): used when it is the CLI itself, or the tray's (`capnode-tray mcp`) when no CLI is installed. */
  readonly script?: string | undefined;
  /** Where the CLI is looked for beside this host (resolved from it, or `apps/cli` in the repository). Default: this module. */
  readonly hostFile?: string;
}

function isExecutable(path: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The `capnode` executable on `PATH`, resolved to an absolute path (GUI clients often start with a shorter PATH). */
function findOnPath(env: CliLaunchOptions['env'], platform: NodeJS.Platform): string | undefined {
  const names = platform === 'win32' ? (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean).map((ext) => `capnode${ext.toLowerCase()}`) : ['capnode'];
  for (const dir of (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const candidate = resolve(dir, name);
      if (isExecutable(candidate, platform)) return candidate;
    }
  }
  return undefined;
}

/** The package whose bin serves `mcp` over stdio: the CLI, or the tray (`capnode-tray mcp`). */
const MCP_BINS = { cli: { name: 'capnode', bin: 'capnode' }, tray: { name: '@capnode/tray', bin: 'capnode-tray' } } as const;

/** The bin script of the `which` package at `dir` (its package.json says so), if built. */
function binOf(dir: string, which: keyof typeof MCP_BINS = 'cli'): string | undefined {
  const wanted = MCP_BINS[which];
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; bin?: unknown };
    if (manifest.name !== wanted.name) return undefined;
    const bin = typeof manifest.bin === 'string' ? manifest.bin : (manifest.bin as Record<string, unknown> | undefined)?.[wanted.bin];
    if (typeof bin !== 'string') return undefined;
    const script = join(dir, bin);
    return existsSync(script) ? script : undefined;
  } catch {
    return undefined;
  }
}

/** The nearest directory above `file` with a package.json. */
function packageDir(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `script` (this process's) when it is the bin of the `which` package, as a real path. */
function ownScript(script: string | undefined, which: keyof typeof MCP_BINS): string | undefined {
  if (!script) return undefined;
  try {
    const real = realpathSync(script);
    const dir = packageDir(real);
    return dir && binOf(dir, which) === real ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CLI's `dist/bin.js` without a `capnode` on PATH: this process's script when it is the CLI,
 * the `capnode` package as Node resolves it from this host, or the CLI beside this host in the
 * capnode repository (`apps/cli`).
 */
function findCliScript(script: string | undefined, here: string): string | undefined {
  const own = ownScript(script, 'cli');
  if (own) return own;
  // Installed beside this host: `node_modules/capnode` in a directory above it, as Node resolves a
  // package (without NODE_PATH, which belongs to whoever started the host, not to the install).
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    const found = binOf(join(dir, 'node_modules', 'capnode'));
    if (found) return found;
    if (dirname(dir) === dir) break;
  }
  const hostDir = packageDir(here);
  return hostDir ? binOf(join(hostDir, '..', '..', 'apps', 'cli')) : undefined;
}

/**
 * How a stdio client (Claude Desktop) starts this host's capabilities: `capnode mcp` from the
 * installed `capnode` on PATH, else Node with the CLI's `dist/bin.js`, else — a tray installed
 * without the CLI — Node with the tray's own bin (`capnode-tray mcp`, the same host). `CAPNODE_HOME` is passed when this host
 * runs with `CAPNODE_HOME` or another config directory than the default, so `capnode mcp` reads the same settings.
 */
export function cliLaunch(options: CliLaunchOptions): StdioLaunch {
  const platform = options.platform ?? process.platform;
  const defaultHome = resolveHome({ env: { ...options.env, CAPNODE_HOME: undefined }, userHome: options.userHome, platform });
  const env = options.env.CAPNODE_HOME || options.home !== defaultHome ? { env: { CAPNODE_HOME: options.home } } : {};
  const bin = findOnPath(options.env, platform);
  if (bin) return { command: bin, args: ['mcp'], ...env };
  const script = findCliScript(options.script, options.hostFile ?? fileURLToPath(import.meta.url)) ?? ownScript(options.script, 'tray');
  if (script) return { command: process.execPath, args: [script, 'mcp'], ...env };
  return { command: 'capnode', args: ['mcp'], ...env };
}
