import { join } from 'node:path';
import type { McpHttpServer } from '@capnode/mcp-server/node';
import { HostError } from '../../errors.js';
import { resolveGatewayConfig, type GatewayConnectionConfig, type GatewayMode, type GatewayOverride } from '../gateway/gatewayMode.js';
import type { HostContext } from '../../context/hostContext.js';
import type { HostStatus } from '../../status/hostStatus.js';
import type { ImportedTools } from '../imports/importedTools.js';
import type { OpenAgentPart } from '../openagent/openAgentPart.js';
import type { Settings } from '../../config/settings.js';
import { adminUrlOf, openAdminOnly, type AdminOnlyOptions } from './adminOnlyListener.js';
import type { LockHolder } from './lockHolder.js';
import { createMcpListener, type ListenFn, type McpListener } from './mcpListener.js';
import type { RuntimeFiles } from '../../config/runtimeFiles.js';

export interface HttpModeOptions {
  readonly context: HostContext;
  /** This run's address, port and gateway instead of the settings'. */
  readonly host?: string;
  readonly port?: number;
  readonly gatewayOverride?: GatewayOverride;
  /** Resolves once every plugin loaded or failed: clients and the gateway see every plugin's commands from their first listing. */
  readonly plugins: { ready(): Promise<void> };
  readonly dashboard: { start(): Promise<unknown> };
  readonly gateway: Pick<GatewayMode, 'start' | 'stopNode'>;
  /** OpenAgent's capability channel: connects once the host started, when its switch is on. */
  readonly openagent: Pick<OpenAgentPart, 'start'>;
  readonly imports: Pick<ImportedTools, 'start'>;
  readonly listen: ListenFn;
  readonly runtime: RuntimeFiles;
  readonly lock: Pick<LockHolder, 'acquire' | 'update'>;
  /** The host's status, which `start` resolves with. */
  readonly status: () => HostStatus;
  /** Runs work `close` waits for without waiting for it here. */
  readonly inBackground: (work: Promise<unknown>) => void;
}

/**
 * The started (`start()`) host: the lock, the dashboard, the gateway node, the MCP listener or,
 * without it, the admin-only listener of a gateway node host; and what a running host applies live
 * (`mcp.enabled`, `gateway.*`).
 */
export interface HttpMode {
  /** See `Host.start`. */
  start(): Promise<HostStatus>;
  /** `mcp.enabled` changed on a running host: start the listener, or stop it and keep the admin routes on an admin-only one. */
  applyMcpEnabled(enabled: boolean): Promise<void>;
  /** `gateway.*` changed on a running host: reconnect the gateway node with the new settings (a `gateway` option of this run wins). */
  applyGatewaySettings(next: Settings): Promise<void>;
  /**
   * Drops the gateway node's connection and connects again with the configuration it runs with
   * (`app.connection.reconnect`); resolves whether a gateway node was (re)started.
   */
  reconnectGateway(): Promise<boolean>;
  readonly gatewayConfig: GatewayConnectionConfig | undefined;
  /** The admin-only listener of a gateway node host running without the MCP listener. */
  readonly nodeAdmin: McpHttpServer | undefined;
  /** The MCP listener, whose state `status().mcp` reports. */
  readonly listener: McpListener;
  /** Closes the MCP listener (draining in-flight requests, unpublishing `host.json`), then the admin-only one (unpublishing `run/node-<pid>.json`). */
  close(): Promise<void>;
}

export function createHttpMode(options: HttpModeOptions): HttpMode {
  const { context, runtime, lock } = options;
  const { paths, settings, env, signal } = context;
  const { log, fileLog } = context.logging;
  const listener = createMcpListener({ context, listen: options.listen, ...(options.host === undefined ? {} : { host: options.host }), ...(options.port === undefined ? {} : { port: options.port }) });
  const adminOnly: AdminOnlyOptions = { context, listen: options.listen, runtime };
  const nodeRunFile = join(paths.runDir, `node-${process.pid}.json`);
  let gatewayConfig: GatewayConnectionConfig | undefined;
  let nodeAdmin: McpHttpServer | undefined;
  let starting: Promise<HostStatus> | undefined;
  /** `start()` ran: from then on `mcp.enabled` starts and stops the listener live. */
  let httpStarted = false;

  async function openNodeAdmin(): Promise<McpHttpServer | undefined> {
    const admin = await openAdminOnly(adminOnly, nodeRunFile, 'node');
    if (admin) await lock.update({ adminUrl: adminUrlOf(admin) });
    return admin;
  }

  async function closeNodeAdmin(): Promise<void> {
    if (!nodeAdmin) return;
    const admin = nodeAdmin;
    await admin.close();
    nodeAdmin = undefined;
    runtime.unpublish(nodeRunFile);
  }

  async function startListener(): Promise<HostStatus> {
    const server = await listener.start();
    options.imports.start();
    const adminUrl = adminUrlOf(server);
    await lock.update({ url: server.url, adminUrl });
    await runtime.publish(paths.runtime, { kind: 'http', url: server.url, adminUrl });
    fileLog('info', `capnode ${context.version} started (pid ${process.pid}): MCP on ${server.url}`);
    context.announce();
    return options.status();
  }

  async function startAll(): Promise<HostStatus> {
    // Clients and the gateway see every plugin's commands from their first listing.
    await options.plugins.ready();
    if (signal.aborted) throw new HostError('closed', 'the host was closed while starting');
    const current = settings.get();
    lock.acquire(`${options.host ?? current.mcp.host}:${options.port ?? current.mcp.port}`);
    gatewayConfig = resolveGatewayConfig(current, options.gatewayOverride, env);
    httpStarted = true;
    await options.dashboard.start();
    const nodeOn = gatewayConfig !== undefined && (options.gatewayOverride?.url !== undefined || current.gateway.enabled);
    const channelOn = gatewayConfig !== undefined && current.channel.enabled && current.mcp.enabled;
    if (gatewayConfig) await options.gateway.start(gatewayConfig, { node: nodeOn, channel: channelOn });
    options.openagent.start();
    if (current.mcp.enabled) return startListener();
    listener.disable();
    if (nodeOn && !nodeAdmin) {
      nodeAdmin = await openNodeAdmin();
      if (signal.aborted) await closeNodeAdmin();
    }
    return options.status();
  }

  return {
    start() {
      if (listener.server || nodeAdmin) return Promise.resolve(options.status());
      starting ??= startAll().finally(() => {
        starting = undefined;
      });
      return starting;
    },
    async applyMcpEnabled(enabled) {
      // Before start (or in a stdio host) the setting simply applies when the listener starts.
      if (signal.aborted || !httpStarted) return;
      if (enabled && !listener.server) {
        await startListener();
        const admin = nodeAdmin;
        nodeAdmin = undefined;
        if (admin) options.inBackground(admin.close().then(() => runtime.unpublish(nodeRunFile)));
      } else if (!enabled && listener.server) {
        nodeAdmin ??= await openNodeAdmin();
        const running = listener.detach();
        runtime.unpublish(paths.runtime);
        if (running) options.inBackground(running.close());
      }
    },
    async applyGatewaySettings(next) {
      if (signal.aborted || !httpStarted || options.gatewayOverride?.url !== undefined) return;
      await options.gateway.stopNode();
      gatewayConfig = resolveGatewayConfig(next, undefined, env);
      if (gatewayConfig && next.gateway.enabled) {
        await options.gateway.start(gatewayConfig, { node: true, channel: false });
        log('info', `gateway node: connecting to ${gatewayConfig.url} (settings changed)`);
      }
    },
    async reconnectGateway() {
      if (signal.aborted || !httpStarted || !gatewayConfig) return false;
      if (options.gatewayOverride?.url === undefined && !settings.get().gateway.enabled) return false;
      const config = gatewayConfig;
      await options.gateway.stopNode();
      await options.gateway.start(config, { node: true, channel: false });
      log('info', `gateway node: reconnecting to ${config.url} (asked by a local client)`);
      return true;
    },
    get gatewayConfig() {
      return gatewayConfig;
    },
    get nodeAdmin() {
      return nodeAdmin;
    },
    listener,
    async close() {
      if (await listener.close()) runtime.unpublish(paths.runtime);
      await closeNodeAdmin();
    },
  };
}
