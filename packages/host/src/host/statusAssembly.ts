import type { DashboardService } from '../parts/dashboard/service.js';
import type { GatewayMode, GatewayOverride } from '../parts/gateway/gatewayMode.js';
import type { HostContext } from '../context/hostContext.js';
import type { HostStatus } from '../status/hostStatus.js';
import type { ImportedTools } from '../parts/imports/importedTools.js';
import type { OpenAgentPart } from '../parts/openagent/openAgentPart.js';
import type { PluginManager } from '../parts/plugins/plugins.js';
import { adminUrlOf } from '../parts/listener/adminOnlyListener.js';
import type { HttpMode } from '../parts/listener/httpMode.js';
import type { StdioMode } from '../parts/stdio/stdioMode.js';

/** The parts `status()` reads a slice of, each as it is now. */
export interface HostStatusSources {
  readonly context: HostContext;
  readonly gatewayOverride?: GatewayOverride;
  readonly http: Pick<HttpMode, 'gatewayConfig' | 'nodeAdmin' | 'listener'>;
  readonly stdio: Pick<StdioMode, 'status'>;
  readonly gateway: Pick<GatewayMode, 'status'>;
  readonly imports: Pick<ImportedTools, 'status'>;
  readonly dashboard: Pick<DashboardService, 'status'>;
  readonly plugins: Pick<PluginManager, 'status'>;
  readonly openagent: Pick<OpenAgentPart, 'status'>;
}

/** The host's real state, merged from its parts' slices (see {@link HostStatus}). */
export function assembleHostStatus(sources: HostStatusSources): HostStatus {
  const { paths, started, version } = sources.context;
  const { registry, approvals, audit } = sources.context.pipeline;
  const { listener } = sources.http;
  const current = sources.context.settings.get();
  const pending = approvals.list().length;
  const server = listener.server;
  const nodeAdmin = sources.http.nodeAdmin;
  const override = sources.gatewayOverride;
  return {
    version,
    pid: process.pid,
    startedAt: new Date(started).toISOString(),
    uptimeSeconds: Math.round((Date.now() - started) / 1000),
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
    openagent: sources.openagent.status(),
    ...(nodeAdmin ? { admin: { url: adminUrlOf(nodeAdmin) } } : {}),
    mcpClient: sources.imports.status(),
    audit: { path: audit.path, ...audit.stats() },
    dashboard: sources.dashboard.status(),
    plugins: sources.plugins.status(),
  };
}
