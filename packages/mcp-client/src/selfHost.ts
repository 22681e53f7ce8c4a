import { isLoopbackHost, isPlainObject } from '@capnode/toolkit';

/**
 * The experimental capability a capnode host declares on initialize, `{ instance: '<id>' }`: the
 * stable id of the host's config directory, the same for every host of that directory (an HTTP host,
 * a `capnode mcp` that started before it). A runtime given the same id
 * ({@link McpRuntimeOptions.hostInstance}) refuses the server that declares it: that server is a host
 * of its own config directory, and importing it would offer the host's tools back to itself without end.
 */
export const HOST_MARKER_CAPABILITY = 'capnode/host';

/** The host instance a server declared through {@link HOST_MARKER_CAPABILITY}, if any. */
export function hostInstanceOf(capabilities: { readonly experimental?: Readonly<Record<string, unknown>> | undefined } | undefined): string | undefined {
  const marker = capabilities?.experimental?.[HOST_MARKER_CAPABILITY];
  return isPlainObject(marker) && typeof marker.instance === 'string' ? marker.instance : undefined;
}

/** What makes a server entry this capnode host, for {@link selfEntryReason}. */
export interface SelfHostIdentity {
  /** The ports this host's MCP listener uses (configured and actually bound). */
  readonly ports: readonly number[];
  /** This host's config directory (`CAPNODE_HOME` or the platform default). */
  readonly home: string;
  /** Paths of this capnode's CLI entry (`bin.js`), matched besides any file named `capnode`. */
  readonly bins?: readonly string[];
}

const RUNNERS = new Set(['npx', 'pnpx', 'bunx', 'pnpm', 'npm', 'yarn', 'bun']);
const RUNNER_WORDS = new Set(['dlx', 'exec', 'x', '--']);

/** A path spelled one way: forward slashes, no doubled or trailing slash, no `.` parts (platform-neutral). */
function normalPath(path: string): string {
  return path.replaceAll('\\', '/').replace(/\/(?:\.\/)+/g, '/').replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
}

/** The bare program name: `C:\\x\\capnode.cmd` → `capnode`. */
function program(path: string): string {
  const normal = normalPath(path);
  return normal.slice(normal.lastIndexOf('/') + 1).toLowerCase().replace(/\.(cmd|exe|ps1|bat|js|mjs|cjs)$/, '');
}

function isCapnodePackage(word: string): boolean {
  return /^(?:capnode|@capnode\/cli)(?:@[^/]*)?$/i.test(word);
}

/** True for a path to a capnode CLI or tray entry (both serve `mcp`): a file named `capnode` or `capnode-tray`, a known bin, or their `dist/bin.js`. */
function isCapnodeBin(path: string, bins: readonly string[]): boolean {
  if (program(path) === 'capnode' || program(path) === 'capnode-tray') return true;
  const normal = normalPath(path);
  if (bins.some((bin) => normalPath(bin) === normal)) return true;
  return /(?:^|\/)(?:@capnode\/(?:cli|tray)|capnode(?:\/apps)?\/(?:cli|tray)|apps\/(?:cli|tray))\/dist\/bin\.m?js$/i.test(normal);
}

/** The capnode subcommand words after the program: `mcp`, or `serve --stdio`. */
function servesStdio(args: readonly string[]): boolean {
  const words = args.filter((word) => !word.startsWith('-'));
  return words[0] === 'mcp' || (words[0] === 'serve' && args.includes('--stdio'));
}

/** The words capnode itself gets when `command args…` runs it, or undefined when it does not run capnode. */
function capnodeArgs(command: string, args: readonly string[], bins: readonly string[]): readonly string[] | undefined {
  const name = program(command);
  if ((name === 'cmd' || name === 'sh' || name === 'bash') && args.length >= 2 && /^(?:\/c|-c)$/i.test(args[0]!)) {
    const words = args.slice(1).join(' ').trim().split(/\s+/);
    return words.length > 0 ? capnodeArgs(words[0]!, words.slice(1), bins) : undefined;
  }
  if (isCapnodeBin(command, bins)) return args;
  if (name === 'node' || name === 'nodejs' || name === 'tsx') {
    const at = args.findIndex((word) => !word.startsWith('-'));
    return at >= 0 && isCapnodeBin(args[at]!, bins) ? args.slice(at + 1) : undefined;
  }
  if (RUNNERS.has(name)) {
    let at = 0;
    while (at < args.length && (args[at]!.startsWith('-') || RUNNER_WORDS.has(args[at]!))) at += 1;
    return at < args.length && isCapnodePackage(args[at]!) ? args.slice(at + 1).filter((word) => word !== '--') : undefined;
  }
  return undefined;
}

/**
 * The program an `env [-i] [-u NAME] [NAME=VALUE…] program args…` entry really runs, with the
 * variables it sets over the entry's own `env`; any other entry as it is.
 */
function withoutEnvWrapper(command: string, args: readonly string[], env: Readonly<Record<string, unknown>>): { command: string; args: readonly string[]; env: Readonly<Record<string, unknown>> } {
  if (program(command) !== 'env') return { command, args, env };
  const set: Record<string, unknown> = { ...env };
  let at = 0;
  for (; at < args.length; at += 1) {
    const word = args[at]!;
    if (word === '-u' || word === '--unset') at += 1;
    else if (word === '--') continue;
    else if (word.startsWith('-')) continue;
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) set[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
    else break;
  }
  return at < args.length ? { command: args[at]!, args: args.slice(at + 1), env: set } : { command, args, env };
}

/** True when `url` reaches this machine on one of `ports`: any loopback spelling, `0.0.0.0` or `[::]`. */
function isSelfUrl(url: string, ports: readonly number[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = parsed.hostname.toLowerCase();
  const local = isLoopbackHost(host) || host === '0.0.0.0' || host === '[::]' || host === '0' || host.endsWith('.localhost');
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return local && ports.includes(port);
}

/**
 * Why a server entry (config or import shape: `url`, or `command` + `args` + `env`) is this capnode
 * host, or undefined when it is not: its URL on a loopback spelling and a port this host listens on,
 * or a stdio command that runs `capnode mcp` / `capnode serve --stdio` (any path to the capnode bin,
 * `node …/bin.js`, `npx capnode mcp`, behind `env`) with the same config directory (`CAPNODE_HOME`, also as an `env NAME=VALUE`).
 */
export function selfEntryReason(entry: Readonly<Record<string, unknown>>, self: SelfHostIdentity): string | undefined {
  if (typeof entry.url === 'string') {
    return isSelfUrl(entry.url, self.ports) ? `its URL ${entry.url} is this capnode host's MCP endpoint` : undefined;
  }
  if (typeof entry.command !== 'string') return undefined;
  const args = Array.isArray(entry.args) ? entry.args.filter((arg): arg is string => typeof arg === 'string') : [];
  const run = withoutEnvWrapper(entry.command, args, isPlainObject(entry.env) ? entry.env : {});
  const own = capnodeArgs(run.command, run.args, self.bins ?? []);
  if (own === undefined || !servesStdio(own)) return undefined;
  const env = run.env;
  const home = typeof env.CAPNODE_HOME === 'string' && env.CAPNODE_HOME !== '' ? env.CAPNODE_HOME : undefined;
  if (home !== undefined && normalPath(home) !== normalPath(self.home)) return undefined;
  return `it runs capnode's own stdio server (${[entry.command, ...args].join(' ').slice(0, 120)}) for this config directory`;
}
