import { join } from 'node:path';
import type { Invoker, Registry } from '@capnode/capabilities';
import type { ChannelBridge, GatewayConnectionState, GatewayNode, GatewayNodePublications, GatewayNodeStatus } from '@capnode/gateway-bridge';
import type { LogLevel } from '@capnode/toolkit';
import { HostError } from '../../errors.js';
import type { GatewayNodeModeStatus } from '../../status/hostStatus.js';
import { GATEWAY_TOKEN_ENV, type HostPaths } from '../../config/paths.js';
import type { Settings } from '../../config/settings.js';

export type { GatewayNodeModeState, GatewayNodeModeStatus } from '../../status/hostStatus.js';

export { GATEWAY_TOKEN_ENV } from '../../config/paths.js';
/** File name of the node's device identity in the config directory (same as `@capnode/gateway-bridge/node`). */
export const GATEWAY_NODE_IDENTITY_FILE = 'gateway-device.json';
/** File name of the operator identity (pairing, channel) in the config directory. */
export const OPERATOR_IDENTITY_FILE = 'gateway-operator.json';

/** Where and how to reach the gateway for one run. */
export interface GatewayConnectionConfig {
  readonly url: string;
  /** The shared token; never logged or reported. */
  readonly token?: string;
}

/** Gateway settings given for one run (`capnode serve --gateway … --gateway-token …`); not persisted. */
export interface GatewayOverride {
  readonly url?: string;
  readonly token?: string;
}

/**
 * The gateway to connect to: the run's override URL, else `gateway.url` when `gateway.enabled`; the token
 * from the override, else `CAPNODE_GATEWAY_TOKEN`, else `gateway.token`. `undefined` when gateway node mode is off.
 * @throws HostError `invalid_settings` when gateway node mode is on without a URL, or the URL is not ws/wss.
 */
export function resolveGatewayConfig(settings: Settings, override: GatewayOverride | undefined, env: Readonly<Record<string, string | undefined>>): GatewayConnectionConfig | undefined {
  const url = override?.url ?? (settings.gateway.enabled ? settings.gateway.url : undefined);
  if (url === undefined) {
    if (settings.gateway.enabled) throw new HostError('invalid_settings', 'gateway.enabled is true in settings.json but gateway.url is missing — set it to the gateway URL (e.g. "ws://127.0.0.1:18789") or pass --gateway <url>');
    return undefined;
  }
  if (!/^wss?:\/\/[^\s/]+/i.test(url)) throw new HostError('invalid_settings', `the gateway URL '${url}' is not a ws:// or wss:// URL — e.g. ws://127.0.0.1:18789`);
  const token = override?.token ?? (env[GATEWAY_TOKEN_ENV] || undefined) ?? settings.gateway.token;
  return { url, ...(token ? { token } : {}) };
}


function describe(status: GatewayNodeStatus): string {
  const { connection, pairing } = status;
  const url = connection.url;
  switch (connection.state) {
    case 'connected':
      if (pairing.state === 'commands-pending' || pairing.state === 'device-pending') {
        return `connected to ${url}; the gateway must approve this node${pairing.requestId ? ` (request ${pairing.requestId})` : ''} — run: capnode gateway pair`;
      }
      if (pairing.state === 'rejected') return `connected to ${url}; the gateway rejected this node's commands`;
      return `connected to ${url}${pairing.state === 'approved' ? '; commands approved' : ''}`;
    case 'connecting':
      return `connecting to ${url}${connection.lastError ? ` (last error: ${connection.lastError.message})` : ''}`;
    case 'waiting': {
      const seconds = connection.nextRetryAt === undefined ? undefined : Math.max(0, Math.round((connection.nextRetryAt - Date.now()) / 1000));
      if (pairing.state === 'device-pending') return `waiting for the gateway's owner to approve this device${pairing.requestId ? ` (request ${pairing.requestId})` : ''} — run: capnode gateway pair`;
      return `not connected to ${url}${connection.lastError ? `: ${connection.lastError.message}` : ''}${seconds === undefined ? '' : `; retrying in ${seconds} s`}`;
    }
    case 'failed':
      return `stopped trying ${url}: ${connection.lastError?.message ?? 'the gateway refused the connection'}`;
    case 'closed':
      return 'closed';
  }
}

/** Maps the node transport's status to the host's report. */
export function gatewayNodeModeStatus(status: GatewayNodeStatus, identityPath: string): GatewayNodeModeStatus {
  const { connection } = status;
  return {
    enabled: true,
    state: connection.state,
    url: connection.url,
    nodeId: status.nodeId,
    identityPath,
    ...(connection.lastError ? { lastError: { code: connection.lastError.code, message: connection.lastError.message } } : {}),
    ...(connection.state === 'waiting' && connection.nextRetryAt !== undefined ? { nextRetryAt: new Date(connection.nextRetryAt).toISOString() } : {}),
    ...(connection.state === 'connected' && connection.connectedAt !== undefined ? { connectedAt: new Date(connection.connectedAt).toISOString() } : {}),
    ...(connection.server ? { serverVersion: connection.server.version } : {}),
    pairing: { ...status.pairing },
    declaredCommands: status.declared.commands.length,
    invocations: status.invocations,
    detail: describe(status),
  };
}

export interface GatewayModeOptions {
  readonly paths: HostPaths;
  readonly invoker: Invoker;
  readonly registry: Registry;
  readonly version: string;
  readonly log: (level: LogLevel, message: string) => void;
  /** What the gateway node publishes after connecting (imported MCP tools, the capnode skill). */
  readonly publications?: GatewayNodePublications;
}

/** The host's gateway side: the node connection and, with `channel.enabled`, the channel tools. */
export interface GatewayMode {
  /**
   * Creates the node (it connects and reconnects in the background) and, when `channel`, registers
   * the channel capability. Resolves at once; the connection state is in `status()`.
   * @throws HostError `gateway_failed` (bad URL or identity file).
   */
  start(config: GatewayConnectionConfig, options: { readonly node: boolean; readonly channel: boolean }): Promise<void>;
  status(enabled: boolean, url?: string): GatewayNodeModeStatus;
  /** The connected gateway's hosted plugin surface URL (`pluginSurfaceUrls[surface]` of its hello), while connected. */
  surfaceUrl(surface: string): string | undefined;
  /**
   * The same URL, its capability first renewed through the gateway (`node.pluginSurface.refresh`)
   * when near its expiry or `force`; the current one when that fails.
   */
  freshSurfaceUrl(surface: string, options?: { readonly signal?: AbortSignal; readonly force?: boolean }): Promise<string | undefined>;
  /** Closes the node connection only (the channel stays); `start` can create a new one afterwards (settings changed live). */
  stopNode(): Promise<void>;
  close(): Promise<void>;
}

export function createGatewayMode(options: GatewayModeOptions): GatewayMode {
  const identityPath = join(options.paths.home, GATEWAY_NODE_IDENTITY_FILE);
  let node: GatewayNode | undefined;
  let bridge: ChannelBridge | undefined;
  let failure: { code: string; message: string } | undefined;
  let closed = false;
  let lastState: GatewayConnectionState | undefined;
  const gatewayLog = (prefix: string) => (level: LogLevel, message: string) => options.log(level === 'info' ? 'debug' : level, `${prefix}: ${message}`);

  return {
    async start(config, which) {
      if (closed || (!which.node && !which.channel)) return;
      let nodeModule: typeof import('@capnode/gateway-bridge/node');
      try {
        nodeModule = await import('@capnode/gateway-bridge/node');
      } catch (error) {
        failure = { code: 'unavailable', message: `cannot load the gateway bridge: ${(error as Error).message}` };
        throw new HostError('gateway_failed', failure.message, { cause: error });
      }
      try {
        if (which.node && !node) {
          node = nodeModule.createGatewayNode({
            url: config.url,
            ...(config.token ? { token: config.token } : {}),
            invoker: options.invoker,
            ...(options.publications ? { publications: options.publications } : {}),
            identityPath,
            client: { version: options.version },
            // The transport logs the request (with its id and the fix) as a warning itself.
            onPairingRequired: () => undefined,
            onStatus: (status) => {
              const state = status.connection.state;
              if (state === lastState) return;
              lastState = state;
              if (state === 'connected') options.log('info', `gateway: connected to ${status.connection.url} as node ${status.nodeId}`);
              else if (state === 'failed') options.log('error', `gateway: ${describe(status)}`);
            },
            onLog: gatewayLog('gateway'),
          });
        }
        if (which.channel && !bridge) {
          const { createChannelCapability } = await import('@capnode/gateway-bridge');
          bridge = nodeModule.createGatewayChannelBridge({
            url: config.url,
            ...(config.token ? { token: config.token } : {}),
            identityPath: join(options.paths.home, OPERATOR_IDENTITY_FILE),
            client: { version: options.version },
            onLog: gatewayLog('gateway channel'),
          });
          options.registry.register(createChannelCapability(bridge));
        }
      } catch (error) {
        failure = { code: (error as { code?: string }).code ?? 'failed', message: (error as Error).message };
        throw new HostError('gateway_failed', `gateway node mode could not start: ${failure.message}`, { cause: error });
      }
    },
    surfaceUrl(surface) {
      if (node?.status().connection.state !== 'connected') return undefined;
      return node.pluginSurfaceUrl(surface);
    },
    async freshSurfaceUrl(surface, surfaceOptions) {
      if (node?.status().connection.state !== 'connected') return undefined;
      return node.freshPluginSurfaceUrl(surface, surfaceOptions);
    },
    status(enabled, url) {
      if (node) return gatewayNodeModeStatus(node.status(), identityPath);
      if (!enabled) return { enabled: false, state: 'disabled', identityPath, detail: 'gateway node mode is off (settings.json gateway.enabled, or capnode serve --gateway <url>)' };
      if (failure) return { enabled: true, state: 'failed', ...(url ? { url } : {}), identityPath, lastError: failure, detail: failure.message };
      return { enabled: true, state: 'stopped', ...(url ? { url } : {}), identityPath, detail: 'not started' };
    },
    async stopNode() {
      const running = node;
      node = undefined;
      lastState = undefined;
      failure = undefined;
      await running?.close();
    },
    async close() {
      closed = true;
      await Promise.all([node?.close(), bridge?.close()]);
    },
  };
}
