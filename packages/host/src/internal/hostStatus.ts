import type { ApprovalBroker, Registry } from '@capnode/capabilities';
import type { AuditLog } from '../audit.js';
import type { DashboardService } from '../dashboard/service.js';
import type { GatewayMode, GatewayOverride } from '../gatewayMode.js';
import type { HostStatus } from '../hostTypes.js';
import type { ImportedTools } from '../importedTools.js';
import type { HostPaths } from '../paths.js';
import type { PluginManager } from '../plugins.js';
import type { SettingsStore } from '../settings.js';
import { adminUrlOf } from './adminOnlyListener.js';
import type { HttpMode } from './httpMode.js';
import type { McpListener } from './mcpListener.js';
import type { StdioMode } from './stdioMode.js';

/** Everything `status()` reads, each part as it is now. */
export interface HostStatusSources {
  readonly version: string;
  /** When the host was created (ms since the epoch). */
  readonly started: number;
  readonly paths: HostPaths;
  readonly settings: SettingsStore;
  readonly registry: Registry;
  readonly approvals: ApprovalBroker;
  readonly gatewayOverride?: GatewayOverride;
  readonly listener: McpListener;
  readonly http: Pick<HttpMode, 'gatewayConfig' | 'nodeAdmin'>;
  readonly stdio: Pick<StdioMode, 'status'>;
  readonly gateway: Pick<GatewayMode, 'status'>;
  readonly imports: Pick<ImportedTools, 'status'>;
  readonly audit: Pick<AuditLog, 'path' | 'stats'>;
  readonly dashboard: Pick<DashboardService, 'status'>;
  readonly plugins: Pick<PluginManager, 'status'>;
}

/** The host's real state, assembled from its parts (see {@link HostStatus}). */
export function assembleHostStatus(sources: HostStatusSources): HostStatus {
  const { paths, listener, registry } = sources;
  const current = sources.settings.get();
  const pending = sources.approvals.list().length;
  const server = listener.server;
  const nodeAdmin = sources.http.nodeAdmin;
  const override = sources.gatewayOverride;
  return {
    version: sources.version,
    pid: process.pid,
    startedAt: new Date(sources.started).toISOString(),
    uptimeSeconds: Math.round((Date.now() - sources.started) / 1000),
    home: paths.home,
    settingsPath: paths.settings,
    mcp: {
      state: listener.state,
      ...(server && listener.state === 'listening' ? { url: server.url, inFlight: server.inFlight } : {}),
      ...(listener.error === undefined ? {} : { error: listener.error }),
      tokenPath: paths.mcpToken,
    },
    stdio: sources.stdio.status(),
    capabilities: {
      commands: registry.commands().length,
      categories: [...new Set(registry.commands().map((command) => command.category))],
    },
    execApprovals: { mode: current.execApprovals.mode, allowlist: current.execApprovals.allowlist.length, pending },
    node: sources.gateway.status(override?.url !== undefined || current.gateway.enabled, sources.http.gatewayConfig?.url ?? override?.url ?? current.gateway.url),
    channel: { enabled: current.channel.enabled },
    ...(nodeAdmin ? { admin: { url: adminUrlOf(nodeAdmin) } } : {}),
    mcpClient: sources.imports.status(),
    audit: { path: sources.audit.path, ...sources.audit.stats() },
    dashboard: sources.dashboard.status(),
    plugins: sources.plugins.status(),
  };
}
