import { join } from 'node:path';
import type { McpHttpServer } from '@capnode/mcp-server/node';
import type { DashboardService } from '../dashboard/service.js';
import { HostError } from '../errors.js';
import { resolveGatewayConfig, type GatewayConnectionConfig, type GatewayMode, type GatewayOverride } from '../gatewayMode.js';
import { acquireHostLock, type HostLock } from '../hostLock.js';
import type { HostStatus } from '../hostTypes.js';
import type { ImportedTools } from '../importedTools.js';
import type { HostPaths } from '../paths.js';
import type { PluginManager } from '../plugins.js';
import type { Settings, SettingsStore } from '../settings.js';
import { adminUrlOf, openAdminOnly, type AdminOnlyOptions } from './adminOnlyListener.js';
import type { HostLog } from './hostLogging.js';
import type { McpListener } from './mcpListener.js';
import type { RuntimeFiles } from './runtimeFiles.js';

export interface HttpModeOptions {
  readonly paths: HostPaths;
  readonly settings: SettingsStore;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly instance: string;
  readonly version: string;
  /** This run's address, port and gateway instead of the settings'. */
  readonly host?: string;
  readonly port?: number;
  readonly gatewayOverride?: GatewayOverride;
  readonly plugins: Pick<PluginManager, 'ready'>;
  readonly dashboard: Pick<DashboardService, 'start'>;
  readonly gateway: Pick<GatewayMode, 'start' | 'stopNode'>;
  readonly imports: Pick<ImportedTools, 'start'>;
  readonly listener: McpListener;
  readonly runtime: RuntimeFiles;
  readonly adminOnly: AdminOnlyOptions;
  readonly log: HostLog;
  readonly fileLog: HostLog;
  readonly closed: () => boolean;
  readonly status: () => HostStatus;
  /** The host logged that it started (it logs that it stopped, then). */
  readonly announce: () => void;
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
  readonly gatewayConfig: GatewayConnectionConfig | undefined;
  /** The admin-only listener of a gateway node host running without the MCP listener. */
  readonly nodeAdmin: McpHttpServer | undefined;
  /** Closes the listener (unpublishing `host.json`). */
  closeListener(): Promise<void>;
  /** Closes the admin-only listener (unpublishing `run/node-<pid>.json`). */
  closeNodeAdmin(): Promise<void>;
  /** Releases the config directory's lock. */
  releaseLock(): void;
}

export function createHttpMode(options: HttpModeOptions): HttpMode {
  const { paths, settings, listener, runtime } = options;
  const nodeRunFile = join(paths.runDir, `node-${process.pid}.json`);
  let gatewayConfig: GatewayConnectionConfig | undefined;
  let nodeAdmin: McpHttpServer | undefined;
  let lock: HostLock | undefined;
  let starting: Promise<HostStatus> | undefined;
  /** `start()` ran: from then on `mcp.enabled` starts and stops the listener live. */
  let httpStarted = false;

  async function openNodeAdmin(): Promise<McpHttpServer | undefined> {
    const admin = await openAdminOnly(options.adminOnly, nodeRunFile, 'node');
    if (admin) await lock?.update({ adminUrl: adminUrlOf(admin) });
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
    await lock?.update({ url: server.url, adminUrl });
    await runtime.publish(paths.runtime, { kind: 'http', url: server.url, adminUrl });
    options.fileLog('info', `capnode ${options.version} started (pid ${process.pid}): MCP on ${server.url}`);
    options.announce();
    return options.status();
  }

  async function startAll(): Promise<HostStatus> {
    // Clients and the gateway see every plugin's commands from their first listing.
    await options.plugins.ready();
    if (options.closed()) throw new HostError('closed', 'the host was closed while starting');
    const current = settings.get();
    lock ??= acquireHostLock({
      runDir: paths.runDir,
      home: paths.home,
      instance: options.instance,
      address: `${options.host ?? current.mcp.host}:${options.port ?? current.mcp.port}`,
      onWarning: (message) => options.log('warning', message),
    });
    gatewayConfig = resolveGatewayConfig(current, options.gatewayOverride, options.env);
    httpStarted = true;
    await options.dashboard.start();
    const nodeOn = gatewayConfig !== undefined && (options.gatewayOverride?.url !== undefined || current.gateway.enabled);
    const channelOn = gatewayConfig !== undefined && current.channel.enabled && current.mcp.enabled;
    if (gatewayConfig) await options.gateway.start(gatewayConfig, { node: nodeOn, channel: channelOn });
    if (current.mcp.enabled) return startListener();
    listener.disable();
    if (nodeOn && !nodeAdmin) {
      nodeAdmin = await openNodeAdmin();
      if (options.closed()) await closeNodeAdmin();
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
      if (options.closed() || !httpStarted) return;
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
      if (options.closed() || !httpStarted || options.gatewayOverride?.url !== undefined) return;
      await options.gateway.stopNode();
      gatewayConfig = resolveGatewayConfig(next, undefined, options.env);
      if (gatewayConfig && next.gateway.enabled) {
        await options.gateway.start(gatewayConfig, { node: true, channel: false });
        options.log('info', `gateway node: connecting to ${gatewayConfig.url} (settings changed)`);
      }
    },
    get gatewayConfig() {
      return gatewayConfig;
    },
    get nodeAdmin() {
      return nodeAdmin;
    },
    async closeListener() {
      if (await listener.close()) runtime.unpublish(paths.runtime);
    },
    closeNodeAdmin,
    releaseLock: () => lock?.release(),
  };
}
