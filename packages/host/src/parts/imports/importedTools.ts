import { dirname, join } from 'node:path';
import type { ApprovalBroker, Invoker } from '@capnode/capabilities';
import type { ApprovalRequest, Logger, McpRuntime, McpServerConfig, SelfHostIdentity, ServerDiagnostic } from '@capnode/mcp-client';
import type { HostLogLevel } from '../../logging/logLevel.js';
import { DEFAULT_MCP_CLIENT_AGENT, resolveMcpClientSettings, type McpClientSetup } from '../../config/mcpClientSettings.js';
import { requestToolApproval } from '../pipeline/pipeline.js';
import type { Settings, SettingsStore } from '../../config/settings.js';
import type { ImportedToolsState, ImportedToolsStatus } from '../../status/hostStatus.js';

export type { ImportedToolsState, ImportedToolsStatus } from '../../status/hostStatus.js';


export interface ImportedToolsOptions {
  readonly settings: SettingsStore;
  readonly invoker: Invoker;
  readonly approvals: ApprovalBroker;
  readonly log: (level: HostLogLevel, message: string) => void;
  readonly version: string;
  /**
   * This config directory's host id, declared by its MCP server as `capnode/host`: a server that
   * declares it is a host of this directory and is refused (`self_host`), so capnode's tools never
   * loop back into it.
   */
  readonly instance?: string;
  /** Recognises this host's own entry (its MCP URL, `capnode mcp` for this config directory) before connecting. */
  readonly identity?: SelfHostIdentity;
}

/** The host's MCP client runtime: started in the background, never blocking the host. */
export interface ImportedTools {
  /** Starts connecting the configured servers when `mcpClient.reexport` is on; returns at once. Idempotent. */
  start(): void;
  /** Resolves once startup has settled (every server connected or failed); for tests and the tray. */
  ready(): Promise<void>;
  status(): ImportedToolsStatus;
  /** Each imported tool's server and own name, by its exposed command name (for OpenAgent's catalog servers). */
  origins(): ReadonlyMap<string, { readonly server: string; readonly tool: string }>;
  /** Calls `listener` after {@link origins} changed; returns the unsubscribe function. */
  subscribeOrigins(listener: () => void): () => void;
  /** Cancels a startup in progress and closes every server connection (stdio children included). */
  close(): Promise<void>;
}

/** Each imported tool's server and own name by exposed name, re-read when the runtime's catalog changes. */
function createOriginTracker() {
  const listeners = new Set<() => void>();
  const tracker = {
    current: new Map<string, { readonly server: string; readonly tool: string }>() as ReadonlyMap<string, { readonly server: string; readonly tool: string }>,
    async refresh(runtime: McpRuntime, signal: AbortSignal): Promise<void> {
      try {
        const tools = await runtime.tools({ signal });
        tracker.current = new Map(Object.values(tools).filter((tool) => tool.server !== '*').map((tool) => [tool.name, { server: tool.server, tool: tool.tool }]));
      } catch {
        return; // closing, or a server failed its listing: the previous map stands
      }
      for (const listener of listeners) listener();
    },
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return tracker;
}

function pendingDiagnostic(server: McpServerConfig): ServerDiagnostic {
  return { server: server.name, transport: server.transport, state: 'connecting', toolCount: 0, warnings: [] };
}

/**
 * Runs the MCP client for the host: with `mcpClient.reexport` on, connects the configured servers
 * with the host's invoker, so their tools join the host's registry as `<server>__<tool>` and its MCP
 * listeners serve them through the same pipeline (risk profile, approvals, audit). Calls that need
 * approval are asked through the host's approval broker (`capnode approvals allow <id> [--always]`;
 * `--always` adds the tool to the agent's `auto_approve`).
 */
export function createImportedTools(options: ImportedToolsOptions): ImportedTools {
  const { settings, invoker, approvals, log } = options;
  let setup: McpClientSetup | undefined;
  let state: ImportedToolsState = 'off';
  let runtime: McpRuntime | undefined;
  let startup: Promise<void> | undefined;
  let error: string | undefined;
  let closed = false;
  const controller = new AbortController();
  const origins = createOriginTracker();
  try {
    setup = resolveMcpClientSettings(settings.get());
  } catch (failure) {
    state = 'failed';
    error = (failure as Error).message;
  }

  const logger: Logger = {
    debug: (message) => log('debug', message),
    info: (message) => log('debug', message),
    warn: (message) => log('warning', message),
    error: (message) => log('error', message),
  };

  function profileName(current: McpClientSetup): string {
    return current.config.agents[current.agent]?.riskProfile ?? current.agent;
  }

  /** Adds `name` to the agent's `auto_approve` in settings.json and applies it to the running runtime. */
  async function approveAlways(name: string): Promise<void> {
    const current = setup!;
    const profile = profileName(current);
    const next = await settings.update((value: Settings) => {
      const section = value.mcpClient ?? {};
      const profiles = (section.risk_profiles ?? {}) as Record<string, Record<string, unknown>>;
      const existing = profiles[profile] ?? {};
      const list = Array.isArray(existing.auto_approve) ? (existing.auto_approve as string[]) : [];
      if (list.some((entry) => entry.toLowerCase() === name.toLowerCase())) return value;
      return { ...value, mcpClient: { ...section, risk_profiles: { ...profiles, [profile]: { ...existing, auto_approve: [...list, name] } } } };
    });
    setup = resolveMcpClientSettings(next);
    await runtime?.reload(setup.config);
    log('info', `${name} is now approved automatically (mcpClient.risk_profiles.${profile}.auto_approve in ${settings.path})`);
  }

  async function approve(request: ApprovalRequest): Promise<boolean> {
    const answer = await requestToolApproval(approvals, request);
    if (answer.decision === 'deny') return false;
    if (answer.decision === 'allow-always') {
      await approveAlways(request.name).catch((failure: unknown) => log('warning', `could not save the approval of ${request.name}: ${(failure as Error).message}`));
    }
    return true;
  }

  async function run(current: McpClientSetup): Promise<void> {
    const { createMcpRuntime } = await import('@capnode/mcp-client/node');
    const started = await createMcpRuntime(current.config, {
      agent: current.agent,
      allServers: current.allServers,
      invoker,
      approve,
      logger,
      signal: controller.signal,
      clientInfo: { name: 'capnode', version: options.version },
      ...(options.instance === undefined ? {} : { hostInstance: options.instance }),
      ...(options.identity === undefined ? {} : { hostIdentity: options.identity }),
      // Tokens from `capnode servers login` (refreshed automatically); the host never opens a browser.
      oauth: { dir: join(dirname(settings.path), 'oauth') },
      // Each server's tools join the registry as soon as that server is ready; a slow one holds none back.
      waitForServers: false,
      // A server's question during an imported tool's call goes to the host's client of that call,
      // when that client can elicit (the pipeline's `elicit`); otherwise it is refused.
      forwardElicitation: true,
    });
    if (closed) {
      await started.close();
      return;
    }
    runtime = started;
    started.subscribe((event) => {
      if (event.type === 'catalog-changed') void refreshOrigins();
    });
    await started.ready({ signal: controller.signal });
    if (closed) return;
    await refreshOrigins();
    state = 'ready';
    const diagnostics = started.diagnostics();
    for (const diagnostic of diagnostics) {
      if (diagnostic.state === 'connected') {
        log('info', `MCP server '${diagnostic.server}' connected (${diagnostic.transport}, ${Math.round(diagnostic.connectMs ?? 0)} ms, ${diagnostic.toolCount} tools)`);
      }
    }
    const connected = diagnostics.filter((diagnostic) => diagnostic.state === 'connected').length;
    log('info', `imported MCP tools ready: ${importedCount()} tools from ${connected} of ${diagnostics.length} servers`);
  }

  const refreshOrigins = () => (runtime && !closed ? origins.refresh(runtime, controller.signal) : Promise.resolve());

  function importedCount(): number {
    return invoker.registry.commands().filter((command) => command.category === 'mcp').length;
  }

  return {
    start() {
      if (startup || closed) return;
      if (error !== undefined) log('error', `imported MCP tools: ${error}`);
      if (!setup?.reexport) {
        startup = Promise.resolve();
        return;
      }
      for (const warning of setup.warnings) log('warning', `settings mcpClient.${warning.path}: ${warning.message}`);
      state = 'starting';
      startup = run(setup).catch((failure: unknown) => {
        if (closed) return;
        state = 'failed';
        error = (failure as Error)?.message ?? String(failure);
        log('error', `imported MCP tools could not start: ${error}`);
      });
    },
    async ready() {
      await startup;
    },
    origins: () => origins.current,
    subscribeOrigins: (listener) => origins.subscribe(listener),
    status() {
      const current = setup;
      const servers = runtime ? runtime.diagnostics() : state === 'starting' && current ? current.servers.map(pendingDiagnostic) : [];
      const warnings = state === 'off' ? [] : [...(current?.warnings.map((warning) => `mcpClient.${warning.path}: ${warning.message}`) ?? []), ...(runtime?.warnings ?? [])];
      return {
        reexport: current?.reexport ?? false,
        state,
        agent: current?.agent ?? DEFAULT_MCP_CLIENT_AGENT,
        servers,
        toolCount: runtime ? importedCount() : 0,
        warnings,
        ...(error === undefined ? {} : { error }),
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      controller.abort();
      await startup;
      await runtime?.close();
      if (state !== 'off') state = 'closed';
    },
  };
}
