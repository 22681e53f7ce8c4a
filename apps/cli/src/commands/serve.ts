import { resolve } from 'node:path';
import { flag, flagValues, portFlag } from '../args.js';
import { readToken, type Context } from '../context.js';
import type { Endpoint } from '../http.js';
import { CliError, hostFailure } from '../errors.js';
import { toolNamesFlag, withToolNames } from '../toolNamesFlag.js';
import type { Host, HostStatus } from '@capnode/host';

type HostModule = typeof import('@capnode/host');

async function loadHost(): Promise<HostModule> {
  return import('@capnode/host');
}

function logger(context: Context) {
  const debug = Boolean(context.env.CAPNODE_DEBUG);
  return (level: string, message: string) => {
    if (level !== 'debug' || debug) context.err(`capnode ${level}: ${message}`);
  };
}

/** `--gateway` / `--gateway-token` for this run (the token also comes from CAPNODE_GATEWAY_TOKEN or settings.json). */
export function gatewayOverride(context: Context): { url?: string; token?: string } | undefined {
  const url = flag(context.args, 'gateway');
  const token = flag(context.args, 'gateway-token');
  if (url === undefined && token === undefined) return undefined;
  if (url !== undefined && !/^wss?:\/\/[^\s/]+/i.test(url)) throw new CliError('usage', `--gateway must be a ws:// or wss:// URL, e.g. ws://127.0.0.1:18789 — got '${url}'`);
  return { ...(url === undefined ? {} : { url }), ...(token === undefined ? {} : { token }) };
}

/** Where the dashboard is and how to open it (its page needs the one-time sign-in of `capnode ui`). */
function dashboardLine(dashboard: HostStatus['dashboard']): string {
  if (dashboard.state === 'listening' && dashboard.url) return `${dashboard.url}   (open it: capnode ui)`;
  if (dashboard.state === 'disabled') return 'off   (dashboard.enabled: false in settings.json)';
  return `${dashboard.state}${dashboard.error ? ` — ${dashboard.error}` : ''}`;
}

/**
 * `capnode serve`: runs the host in the foreground until SIGINT/SIGTERM, then drains in-flight
 * requests. The last startup line is `capnode ready: MCP on <url> (token: <path>)`.
 */
export async function serve(context: Context, version: string): Promise<number> {
  const [hostModule, { limitYoungGenerationGrowth }] = await Promise.all([loadHost(), import('@capnode/mcp-server/node')]);
  // This process serves requests for as long as it runs: keep young-generation pauses short.
  limitYoungGenerationGrowth();
  const port = portFlag(context.args);
  const address = flag(context.args, 'host');
  const gateway = gatewayOverride(context);
  const openagentUrl = flag(context.args, 'openagent');
  if (openagentUrl !== undefined && !/^wss?:\/\/[^\s/]+/i.test(openagentUrl)) throw new CliError('usage', `--openagent must be a ws:// or wss:// URL, e.g. ws://127.0.0.1:8080/ws/capabilities — got '${openagentUrl}'`);
  const devPlugins = flagValues(context.args, 'dev-plugin').map((path) => resolve(path));
  let host: Host;
  try {
    host = hostModule.createHost({
      env: context.env,
      version,
      ...(devPlugins.length ? { devPlugins } : {}),
      ...(port === undefined ? {} : { port }),
      ...(address === undefined ? {} : { host: address }),
      ...(gateway ? { gateway } : {}),
      ...(openagentUrl === undefined ? {} : { openagent: { url: openagentUrl } }),
      onLog: logger(context),
    });
  } catch (error) {
    hostFailure(error, hostModule);
  }
  let status;
  try {
    status = await host.start();
  } catch (error) {
    await host.close();
    hostFailure(error, hostModule);
  }
  const mcpOn = status.mcp.state === 'listening' && status.mcp.url !== undefined;
  if (!mcpOn && !status.node.enabled) {
    await host.close();
    throw new CliError(
      'failure',
      `nothing to serve: the MCP server is off (mcp.enabled: false in ${status.settingsPath}) and gateway node mode is off — set mcp.enabled to true, or connect to an OpenClaw gateway: capnode serve --gateway ws://<host>:18789 (token: CAPNODE_GATEWAY_TOKEN)`,
    );
  }
  context.out(`capnode ${version} (pid ${process.pid})`);
  if (mcpOn) {
    context.out(`  MCP endpoint:   ${status.mcp.url}`);
    context.out(`  token file:     ${status.mcp.tokenPath}   (show it: capnode token show)`);
  } else {
    context.out(`  MCP server:     off (mcp.enabled: false in settings.json)`);
  }
  if (status.node.enabled) {
    context.out(`  gateway node:   ${status.node.url} as node ${status.node.nodeId ?? '?'} — ${status.node.state}   (state: capnode gateway status)`);
    context.out(`                  the gateway must approve this node's commands once: capnode gateway pair (or openclaw nodes approve <request id>)`);
  }
  if (status.openagent.enabled || openagentUrl !== undefined) context.out(`  OpenAgent:      ${status.openagent.detail}   (state: capnode openagent status)`);
  context.out(`  settings:       ${status.settingsPath}`);
  context.out(`  dashboard:      ${dashboardLine(status.dashboard)}`);
  context.out(`  exec approvals: ${status.execApprovals.mode}${status.execApprovals.mode === 'ask' ? '   (answer with: capnode approvals watch, or list|allow|deny)' : ''}`);
  context.out(`  tools:          ${status.capabilities.commands}   (list them: capnode --list-tools)`);
  for (const plugin of status.plugins) {
    if (plugin.state === 'failed') context.out(`  plugin failed:  ${plugin.name} (${plugin.source}): ${plugin.error}`);
    else if (plugin.kind === 'dev') context.out(`  dev plugin:     ${plugin.name} (${plugin.source}), reloaded when it changes`);
  }
  const imports = status.mcpClient;
  if (imports.reexport) {
    const count = imports.servers.length;
    context.out(`  MCP servers:    re-exporting ${count} server${count === 1 ? '' : 's'} as <server>__<tool>; connecting in the background (state: capnode status)`);
  }
  if (mcpOn) context.out(`capnode ready: MCP on ${status.mcp.url} (token: ${status.mcp.tokenPath})`);
  else context.out(`capnode ready: gateway node for ${status.node.url} (MCP server off)`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        context.err('capnode: forced exit');
        process.exit(130);
      }
      stopping = true;
      context.err(`capnode: ${signal} received, draining in-flight requests (press Ctrl-C again to force)`);
      void host.close().then(
        () => {
          context.err('capnode: stopped');
          resolve(0);
        },
        (error: unknown) => {
          context.err(`capnode: shutdown failed: ${(error as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `capnode mcp` while a host runs: a relay between stdio and its MCP endpoint, until the client closes stdin. */
async function relayToHost(context: Context, endpoint: Endpoint): Promise<number> {
  const { relayStdio } = await import('@capnode/host/setup');
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  context.err(`capnode mcp: relaying to the running host at ${endpoint.url} (its approvals, audit log and dashboard)`);
  try {
    const adminToken = readToken(context.paths.adminToken);
    await relayStdio({
      url: endpoint.url,
      token: endpoint.token!,
      tokenHint: endpoint.tokenHint,
      ...(adminToken === undefined ? {} : { adminToken }),
      input: process.stdin,
      output: process.stdout,
      signal: controller.signal,
      log: (line) => context.err(`capnode mcp: ${line}`),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}

/** `capnode mcp` and `capnode mcp channel`. */
export async function mcp(context: Context, version: string): Promise<number> {
  const { args } = context;
  if (args.positionals[1] === 'channel') return (await import('./gateway.js')).channel(context, version);
  if (args.positionals.length > 1) throw new CliError('usage', `unknown mcp subcommand '${args.positionals[1]}' — capnode mcp, or capnode mcp channel`);
  if (args.flags.has('gateway') || args.flags.has('gateway-token')) throw new CliError('usage', '--gateway applies to capnode mcp channel (and capnode serve)');
  toolNamesFlag(args);
  return serveStdio(context, version);
}

/** The MCP endpoint of this config directory's running HTTP host, when one runs. */
async function runningHost(context: Context): Promise<Endpoint | undefined> {
  const { listRuntimeStates } = await import('@capnode/host/setup');
  const http = listRuntimeStates(context.paths).find((state) => state.kind === 'http' && state.url !== undefined);
  if (http?.url === undefined) return undefined;
  const token = readToken(context.paths.mcpToken);
  if (token === undefined) return undefined;
  return { url: http.url, token, tokenHint: `The token was read from ${context.paths.mcpToken}.` };
}

/**
 * `capnode mcp`: serves MCP over stdio for a client that spawns the CLI. stdout carries protocol
 * messages only; logs go to stderr. While a host of this config directory runs, the calls go to it
 * (one approval queue, audit log and dashboard per user); otherwise this process runs its own host.
 */
export async function serveStdio(context: Context, version: string): Promise<number> {
  const toolNames = toolNamesFlag(context.args);
  const running = await runningHost(context);
  // The host applies its own `mcp.toolNames` (same settings file); `--tool-names` selects per connection.
  if (running) return relayToHost(context, toolNames === undefined ? running : { ...running, url: withToolNames(running.url, toolNames) });
  const hostModule = await loadHost();
  let host: Host;
  try {
    host = hostModule.createHost({ env: context.env, version, onLog: logger(context) });
  } catch (error) {
    hostFailure(error, hostModule);
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await host.serveStdio({ signal: controller.signal, ...(toolNames === undefined ? {} : { toolNames }) });
  } finally {
    await host.close();
  }
  return 0;
}
