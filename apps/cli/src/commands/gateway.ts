import { join } from 'node:path';
import type { HostStatus, GatewayNodeModeStatus } from '@capnode/host';
import { listRuntimeStates } from '@capnode/host/setup';
import { flag } from '../args.js';
import { readToken, type Context } from '../context.js';
import { CliError, hostFailure } from '../errors.js';
import { readText, send } from '../http.js';
import { openCliPipeline, type CliPipeline } from '../pipeline.js';
import { gatewayOverride } from './serve.js';

type HostModule = typeof import('@capnode/host') & typeof import('@capnode/host/settings');

/** The host's gateway API with its settings-file API. */
async function loadHostModule(): Promise<HostModule> {
  const [root, settings] = await Promise.all([import('@capnode/host'), import('@capnode/host/settings')]);
  return { ...root, ...settings };
}

/** The running hosts' status reports (admin route), skipping hosts that went away. */
export async function runningStatuses(context: Context): Promise<HostStatus[]> {
  const token = readToken(context.paths.adminToken);
  const explicit = flag(context.args, 'url') ?? context.env.CAPNODE_URL;
  const bases = explicit ? [new URL('/_capnode/', explicit).href] : listRuntimeStates(context.paths).map((state) => state.adminUrl);
  const statuses: HostStatus[] = [];
  for (const base of bases) {
    try {
      const result = await send({ url: base, token, tokenHint: `The admin token is read from ${context.paths.adminToken}.` }, new URL('status', base).href, { method: 'GET' });
      const text = await readText(result.response);
      if (result.status === 200) statuses.push(JSON.parse(text) as HostStatus);
    } catch (error) {
      if (explicit) throw error;
    }
  }
  return statuses;
}

function printNode(context: Context, node: GatewayNodeModeStatus, pid: number): void {
  context.out(`gateway node (host pid ${pid}): ${node.state}`);
  if (node.url) context.out(`  gateway:      ${node.url}`);
  if (node.nodeId) context.out(`  node id:      ${node.nodeId}`);
  context.out(`  ${node.detail}`);
  if (node.lastError) context.out(`  last error:   ${node.lastError.message} (${node.lastError.code})`);
  if (node.nextRetryAt) context.out(`  next retry:   ${node.nextRetryAt}`);
  if (node.pairing) {
    context.out(`  pairing:      ${node.pairing.state}${node.pairing.requestId ? ` (request ${node.pairing.requestId})` : ''}`);
    if (node.pairing.state === 'commands-pending' || node.pairing.state === 'device-pending') context.out('                approve it: capnode gateway pair');
  }
  if (node.declaredCommands !== undefined) context.out(`  commands:     ${node.declaredCommands} declared`);
  if (node.invocations) context.out(`  invocations:  ${node.invocations.started} run, ${node.invocations.running} running, ${node.invocations.busy} refused busy, ${node.invocations.replayed} replayed`);
}

/** `capnode gateway status|pair`. */
export async function gateway(context: Context, version: string): Promise<number> {
  const action = context.args.positionals[1];
  if (action === 'status') return status(context);
  if (action === 'pair') return pair(context, version);
  throw new CliError('usage', `${action === undefined ? 'missing' : `unknown`} gateway subcommand${action === undefined ? '' : ` '${action}'`} — use: capnode gateway status | capnode gateway pair`);
}

async function status(context: Context): Promise<number> {
  const hostModule: HostModule = await loadHostModule();
  const running = (await runningStatuses(context)).filter((entry) => entry.node);
  const live = running.find((entry) => entry.node.enabled);
  if (live) {
    if (context.json) context.out(JSON.stringify({ running: true, pid: live.pid, node: live.node }, null, 2));
    else printNode(context, live.node, live.pid);
    return 0;
  }
  const settings = loadSettingsOrFail(context, hostModule);
  const identityPath = join(context.paths.home, hostModule.GATEWAY_NODE_IDENTITY_FILE);
  const nodeId = hostModule.readGatewayNodeId(context.paths.home);
  const tokenSource = flag(context.args, 'gateway-token') ? '--gateway-token' : context.env[hostModule.GATEWAY_TOKEN_ENV] ? hostModule.GATEWAY_TOKEN_ENV : settings.gateway.token ? 'settings.json gateway.token' : undefined;
  const offline = {
    running: false,
    hostRunning: running.length > 0,
    enabled: settings.gateway.enabled,
    ...(settings.gateway.url ? { url: settings.gateway.url } : {}),
    token: tokenSource ? `set (${tokenSource})` : 'not set',
    identityPath,
    ...(nodeId ? { nodeId } : {}),
  };
  if (context.json) {
    context.out(JSON.stringify(offline, null, 2));
    return 0;
  }
  context.out(running.length > 0 ? 'gateway node: off in the running host' : 'gateway node: no host running');
  context.out(`  mode:         ${settings.gateway.enabled ? 'on' : 'off'} in ${context.paths.settings}${settings.gateway.url ? ` (gateway ${settings.gateway.url})` : ''}`);
  context.out(`  token:        ${offline.token}`);
  context.out(`  identity:     ${nodeId ? `node id ${nodeId}` : 'none yet (created on first connect)'} — ${identityPath}`);
  context.out('  start it:     capnode serve --gateway ws://<host>:18789   (token: CAPNODE_GATEWAY_TOKEN)');
  return 0;
}

function loadSettingsOrFail(context: Context, hostModule: HostModule): ReturnType<HostModule['loadSettings']> {
  try {
    return hostModule.loadSettings(context.paths.settings);
  } catch (error) {
    hostFailure(error, hostModule);
  }
}

/** URL and token of the gateway: flags, else the running host's gateway URL, else settings.json; token: flag, env, settings. */
async function gatewayTarget(context: Context, hostModule: HostModule, allowRunning: boolean): Promise<{ url: string; token?: string }> {
  const settings = loadSettingsOrFail(context, hostModule);
  const override = gatewayOverride(context) ?? {};
  let url = override.url;
  if (url === undefined && allowRunning) url = (await runningStatuses(context)).find((entry) => entry.node?.enabled && entry.node.url)?.node.url;
  url ??= settings.gateway.url;
  if (url === undefined) throw new CliError('usage', 'which gateway? pass --gateway ws://<host>:18789, or set gateway.url in settings.json');
  try {
    const config = hostModule.resolveGatewayConfig(settings, { ...override, url }, context.env);
    return config!;
  } catch (error) {
    hostFailure(error, hostModule, 'usage');
  }
}

function gatewayFailure(error: unknown, what: string): never {
  const message = (error as Error)?.message ?? String(error);
  throw new CliError('failure', `${what}: ${message}`, { cause: error });
}

/** The approval's failure as the CLI says it: the host's message (it names the fix), exit 130 on Ctrl-C. */
function pairingFailure(error: unknown, hostModule: HostModule): never {
  if (hostModule.isHostError(error) && error.code === 'aborted') throw new CliError('interrupted', 'interrupted', { cause: error });
  hostFailure(error, hostModule);
}

async function pair(context: Context, version: string): Promise<number> {
  const hostModule: HostModule = await loadHostModule();
  const target = await gatewayTarget(context, hostModule, true);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  let result;
  try {
    result = await hostModule.approveGatewayPairing({ home: context.paths.home, ...target, version, signal: controller.signal });
  } catch (error) {
    pairingFailure(error, hostModule);
  } finally {
    process.off('SIGINT', stop);
  }
  const { nodeId, approved, node } = result;
  if (context.json) {
    context.out(JSON.stringify(result, null, 2));
  } else if (approved.length > 0) {
    for (const request of approved) context.out(`approved request ${request.requestId} for node ${nodeId}${request.commands.length ? `: ${request.commands.join(', ')}` : ''}`);
  } else if (!node) {
    context.out(`the gateway at ${target.url} does not know node ${nodeId} — is capnode serve --gateway ${target.url} running?`);
    return 1;
  } else {
    context.out(`nothing to approve: node ${nodeId} is ${node.approvalState ?? 'known'}${node.connected ? ' and connected' : ''}`);
  }
  return 0;
}

/**
 * `capnode mcp channel`: the gateway's conversations, events and approvals as the nine channel tools
 * over MCP stdio, with `notifications/claude/channel` for new messages and Claude permission relay.
 */
export async function channel(context: Context, version: string): Promise<number> {
  const hostModule: HostModule = await loadHostModule();
  const target = await gatewayTarget(context, hostModule, false);
  const [{ createChannelCapability }, { createGatewayChannelBridge }, { serveStdio }] = await Promise.all([
    import('@capnode/gateway-bridge'),
    import('@capnode/gateway-bridge/node'),
    import('@capnode/mcp-server/stdio'),
  ]);
  const debug = Boolean(context.env.CAPNODE_DEBUG);
  let server: Awaited<ReturnType<typeof serveStdio>> | undefined;
  let bridge;
  try {
    bridge = createGatewayChannelBridge({
      url: target.url,
      ...(target.token ? { token: target.token } : {}),
      identityPath: join(context.paths.home, hostModule.OPERATOR_IDENTITY_FILE),
      client: { version },
      notify: (notification) => {
        if (!server) throw new Error('no MCP client connected yet');
        return server.notify(notification.method, notification.params);
      },
      onLog: (level, message) => {
        if (level !== 'debug' && (level !== 'info' || debug)) context.err(`capnode channel ${level}: ${message}`);
      },
    });
  } catch (error) {
    gatewayFailure(error, `cannot use the gateway at ${target.url}`);
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const channelBridge = bridge;
  // The host's pipeline (approvals, audit.log), built here: stdin carries MCP, so approvals are refused with a message, never asked.
  let cli: CliPipeline | undefined;
  try {
    cli = await openCliPipeline(context, { what: 'capnode mcp channel', approvals: 'refuse', capabilities: [createChannelCapability(channelBridge)] });
    server = await serveStdio({
      invoker: cli.pipeline.invoker,
      serverInfo: { name: 'capnode-channel', version },
      signal: controller.signal,
      experimentalCapabilities: { 'claude/channel': {}, 'claude/channel/permission': {} },
      notificationHandlers: {
        'notifications/claude/channel/permission_request': (params) => {
          const text = (key: string) => (typeof params[key] === 'string' ? (params[key] as string) : '');
          if (!text('request_id')) return;
          channelBridge.handleClaudePermissionRequest({ requestId: text('request_id'), toolName: text('tool_name'), description: text('description'), inputPreview: text('input_preview') });
        },
      },
      onError: (error) => context.err(`capnode channel: ${error.message}`),
    });
    await server.closed;
  } finally {
    await channelBridge.close();
    await cli?.close();
  }
  return 0;
}
