/** capnode-tray: the tray / menu-bar icon of the capnode host. */
import { createRequire } from 'node:module';
import { createHost, isHostError, type Host } from '@capnode/host';
import { hostPaths, listRuntimeStates, readTokenFile, relayStdio, resolveHome } from '@capnode/host/setup';
import { discoverAdminTarget } from './adminClient.js';
import { isTrayError } from './errors.js';
import { createAttachedLink, createInProcessLink, inProcessHostOptions, type TrayHostLink } from './hostLink.js';
import { startTray } from './tray.js';

const HELP = `capnode-tray — the capnode host as a tray / menu-bar icon

Usage:
  capnode-tray               attach to the running host of this config directory, else run one in this process
  capnode-tray --attach      only attach: never start a host (the icon shows the error until one runs)
  capnode-tray --in-process  always run the host in this process
  capnode-tray mcp           serve MCP over stdio, as \`capnode mcp\` does (what Claude Desktop starts when
                             the capnode CLI is not installed)
  capnode-tray --help | --version

Menu: status, Open dashboard, Approvals (n), Pause/Resume MCP server, Gateway node mode on/off,
Copy MCP URL, Copy token, Quit. Start at login: capnode service install --tray.
Config directory: CAPNODE_HOME, else the platform default (e.g. ~/.config/capnode).`;

function version(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}

async function startOwnHost(): Promise<Host | 'locked'> {
  const { limitYoungGenerationGrowth } = await import('@capnode/mcp-server/node');
  // This process serves MCP requests for as long as it runs: keep young-generation pauses short.
  limitYoungGenerationGrowth();
  const host = createHost(inProcessHostOptions({ version: version() }));
  try {
    await host.start();
  } catch (error) {
    if (isHostError(error) && error.code === 'locked') {
      await host.close();
      return 'locked';
    }
    // A listener that failed (port in use) stays visible: the tray shows the error icon and the reason.
    if (!isHostError(error) || error.code !== 'listen_failed') {
      await host.close();
      throw error;
    }
    process.stderr.write(`capnode-tray: ${error.message}\n`);
  }
  return host;
}

/**
 * `capnode-tray mcp` while a host of this config directory runs: relays the stdio client to it, as
 * `capnode mcp` does, so its calls land in that host's one approval queue, audit log and dashboard.
 * Returns false when no HTTP host runs (or its token cannot be read).
 */
async function relayToRunningHost(): Promise<boolean> {
  const paths = hostPaths(resolveHome());
  const http = listRuntimeStates(paths).find((state) => state.kind === 'http' && state.url !== undefined);
  const token = http?.url === undefined ? undefined : readTokenFile(paths.mcpToken);
  if (http?.url === undefined || token === undefined) return false;
  const adminToken = readTokenFile(paths.adminToken);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop).once('SIGTERM', stop);
  process.stderr.write(`capnode-tray mcp: relaying to the running host at ${http.url} (its approvals, audit log and dashboard)\n`);
  try {
    await relayStdio({
      url: http.url,
      token,
      tokenHint: `The token was read from ${paths.mcpToken}.`,
      ...(adminToken === undefined ? {} : { adminToken }),
      input: process.stdin,
      output: process.stdout,
      signal: controller.signal,
      log: (line) => process.stderr.write(`capnode-tray mcp: ${line}\n`),
    });
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
  }
  return true;
}

/**
 * `capnode-tray mcp`: this machine's capabilities over MCP stdio, the same host `capnode mcp` runs, so
 * a stdio client (Claude Desktop) connected from the dashboard works with only the tray installed.
 * While a host runs the client is relayed to it; otherwise this process runs its own host.
 * stdout carries protocol messages only; logs go to stderr.
 */
async function serveMcpStdio(): Promise<number> {
  if (await relayToRunningHost()) return 0;
  const debug = Boolean(process.env.CAPNODE_DEBUG);
  const host = createHost({ env: process.env, version: version(), onLog: (level, message) => (level !== 'debug' || debug ? process.stderr.write(`capnode ${level}: ${message}\n`) : undefined) });
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    await host.serveStdio({ signal: controller.signal });
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await host.close();
  }
  return 0;
}

async function chooseLink(mode: 'auto' | 'attach' | 'in-process'): Promise<TrayHostLink> {
  const paths = hostPaths(resolveHome());
  if (mode === 'attach' || (mode === 'auto' && discoverAdminTarget(paths))) return createAttachedLink(paths);
  const host = await startOwnHost();
  if (host !== 'locked') return createInProcessLink(host);
  if (mode === 'in-process') throw new Error(`another capnode host holds ${paths.home}; quit it, or start the tray without --in-process to attach to it`);
  return createAttachedLink(paths);
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'mcp') {
    if (argv.length > 1) {
      process.stderr.write(`capnode-tray: mcp takes no options ('${argv[1]}') — see capnode-tray --help\n`);
      return 2;
    }
    return serveMcpStdio();
  }
  const known = new Set(['--attach', '--in-process', '--help', '-h', '--version', '-V']);
  const unknown = argv.find((arg) => !known.has(arg));
  if (unknown !== undefined) {
    process.stderr.write(`capnode-tray: unknown option '${unknown}' — see capnode-tray --help\n`);
    return 2;
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (argv.includes('--version') || argv.includes('-V')) {
    process.stdout.write(`capnode-tray ${version()}\n`);
    return 0;
  }
  if (argv.includes('--attach') && argv.includes('--in-process')) {
    process.stderr.write('capnode-tray: use either --attach or --in-process, not both\n');
    return 2;
  }
  const link = await chooseLink(argv.includes('--attach') ? 'attach' : argv.includes('--in-process') ? 'in-process' : 'auto');
  const tray = await startTray({ link });
  const stop = () => void tray.close();
  process.once('SIGINT', stop).once('SIGTERM', stop);
  process.stderr.write(`capnode-tray: ${link.mode === 'in-process' ? 'running the host in this process' : `attached to the host of ${link.paths.home}`} (pid ${process.pid})\n`);
  await tray.closed;
  process.off('SIGINT', stop).off('SIGTERM', stop);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const known = isTrayError(error) || isHostError(error);
    process.stderr.write(`capnode-tray: ${known ? (error as Error).message : ((error as Error)?.stack ?? String(error))}\n`);
    process.exitCode = 1;
  },
);
