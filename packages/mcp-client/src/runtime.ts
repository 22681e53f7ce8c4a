import type { Implementation } from '@modelcontextprotocol/client';
import { waitFor } from '@capnode/toolkit';
import type { McpConfig } from './config.js';
import { McpClientError } from './errors.js';
import { resolveAgentGrant } from './grants.js';
import { createToolPolicy, type ToolPolicy } from './policy.js';
import { collectSecrets, createSecretScrubber, type SecretScrubber } from './redact.js';
import { defaultLogger, type McpRuntime, type McpRuntimeEvent, type McpRuntimeOptions, type RuntimePlatform } from './types.js';
import { CapabilityAdapter } from './internal/capabilityAdapter.js';
import { Catalog } from './internal/catalog.js';
import { RuntimeEvents } from './internal/events.js';
import { ServerPool } from './internal/serverPool.js';
import type { ServerRequestHooks } from './internal/serverRequests.js';
import { createServerToolCommands, PROMPTS_TOOL, RESOURCES_TOOL } from './internal/serverTools.js';
import { SEARCH_TOOL } from './internal/toolSearch.js';
import { ToolMap } from './internal/toolMap.js';


const DEFAULT_CLIENT_INFO: Implementation = { name: 'capnode', version: '0.1.0' };

/** What one config grants the runtime's agent. */
interface Selection {
  readonly servers: McpConfig['servers'];
  readonly warnings: readonly string[];
  readonly policy: ToolPolicy;
  readonly scrub: SecretScrubber;
}

function selectServers(from: McpConfig, options: McpRuntimeOptions): Selection {
  const agent = options.agent;
  const grant = resolveAgentGrant(from, agent ?? '');
  const warnings = options.allServers ? [] : agent === undefined ? ['no agent given; no MCP servers are connected'] : [...grant.warnings];
  if (!options.allServers && from.enabled && agent !== undefined && Object.hasOwn(from.agents, agent) && grant.servers.length === 0 && grant.disabled.length === 0 && from.servers.length > 0) {
    // Secure by default, but never silent: servers are configured and this agent gets none of them.
    warnings.push(`${from.servers.length} MCP server(s) configured, but agent '${agent}' is granted none (add them to a bundle in its mcp_bundles)`);
  }
  return {
    servers: options.allServers ? from.servers.filter((s) => s.enabled && from.enabled) : agent === undefined ? [] : grant.servers,
    warnings,
    policy: createToolPolicy(grant.profile, options.runAllowList ? { runAllowList: options.runAllowList } : {}),
    scrub: createSecretScrubber(collectSecrets(from.servers)),
  };
}

/**
 * The scrubber and policy of whatever selection is current (they follow config reloads); the
 * scrubber says how long the longest secret is, so scrubAndCap scrubs a window that holds it.
 */
function followSelection(current: () => Selection): { scrub: SecretScrubber; policy: ToolPolicy } {
  const scrub = Object.defineProperty((text: string) => current().scrub(text), 'longestSecret', { get: () => current().scrub.longestSecret }) as SecretScrubber;
  const policy: ToolPolicy = {
    get profile() {
      return current().policy.profile;
    },
    isAuthorized: (name) => current().policy.isAuthorized(name),
    needsApproval: (name) => current().policy.needsApproval(name),
  };
  return { scrub, policy };
}

/**
 * `run` at most once per event-loop turn however often the result is called: servers that become
 * ready in the same turn share one catalog rebuild (a fan-out of N servers would otherwise rebuild
 * the whole catalog N times). The runtime's own readers (`toolNames`, `warnings`, `call`, `tools()`)
 * rebuild first when the catalog is dirty, so they never see it stale; the registry the host serves
 * from follows at the end of the turn, before `list_changed` goes out.
 */
function oncePerTurn(run: () => void): () => void {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      run();
    });
  };
}

/** The server-to-client request handlers the options set (sampling, elicitation, roots). */
function requestHooksOf(options: McpRuntimeOptions): ServerRequestHooks {
  return {
    ...(options.onSampling ? { onSampling: options.onSampling } : {}),
    ...(options.onElicitation ? { onElicitation: options.onElicitation } : {}),
    ...(options.forwardElicitation ? { forwardElicitation: true } : {}),
    ...(options.roots ? { roots: options.roots } : {}),
  };
}

/** How the pool recognises the runtime's own host (see `McpRuntimeOptions.hostInstance`, `hostIdentity`). */
function selfCheckOf(options: McpRuntimeOptions): { hostInstance: string | undefined; hostIdentity: McpRuntimeOptions['hostIdentity'] } {
  return { hostInstance: options.hostInstance, hostIdentity: options.hostIdentity };
}

/** The pipeline parts the options give the capability adapter (invoker, hooks, approver). */
function pipelineOf(options: McpRuntimeOptions): Pick<McpRuntimeOptions, 'invoker' | 'hooks' | 'approve'> {
  return {
    ...(options.invoker ? { invoker: options.invoker } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.approve ? { approve: options.approve } : {}),
  };
}

/**
 * Creates the runtime over a platform (connector and binary store). `@capnode/mcp-client/node`
 * wraps this as `createMcpRuntime`.
 *
 * The runtime is a server pool (connect, backoff, pause, recycle, close), a catalog (naming, policy,
 * lookup) and two faces over them: the capability adapter for hosts and the tool map for harnesses.
 */
export async function createRuntime(config: McpConfig, options: McpRuntimeOptions, platform: RuntimePlatform): Promise<McpRuntime> {
  const logger = options.logger ?? defaultLogger;
  if (options.signal?.aborted) throw new McpClientError('aborted', 'MCP runtime startup was aborted.', { cause: options.signal.reason });
  let current = config;
  let selection = selectServers(config, options);
  const { scrub, policy } = followSelection(() => selection);
  let closed = false;
  let closing: Promise<void> | undefined;
  const events = new RuntimeEvents(logger);

  const pool = new ServerPool(selection.servers, {
    connector: platform.connector,
    logger,
    scrub,
    clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
    ...selfCheckOf(options),
    // The session that sent list_changed re-lists itself; its catalogChanged follows.
    onToolsChanged() {},
    onCatalogChanged() {
      catalog.dirty = true;
      rebuildSoon();
    },
    requestHooks: requestHooksOf(options),
    emit: (event) => events.emit(event),
  });
  const serverCommands = createServerToolCommands(() => pool.access((server) => catalog.serverPart(server)));
  const catalog: Catalog = new Catalog({
    policy,
    logger,
    reserved: () => [RESOURCES_TOOL, PROMPTS_TOOL, SEARCH_TOOL, ...adapter.reservedNames()],
    serverCommands,
    wrapBuiltin: (command) => adapter.guard(command),
    maxTools: options.maxTools,
  });
  /** Applies pending changes to the catalog (a no-op when it is clean, or the runtime is closed). */
  const rebuild = (): void => {
    if (closed) return;
    const before = catalog.entries;
    if (!catalog.rebuild([...pool.sessions.values()])) return;
    adapter.sync();
    emitCatalogChanges(before, catalog.entries, (event) => events.emit(event));
  };
  const rebuildSoon = oncePerTurn(rebuild);
  const adapter: CapabilityAdapter = new CapabilityAdapter({
    pool,
    catalog,
    policy,
    logger,
    scrub,
    ...pipelineOf(options),
  });

  /** Waits (briefly, see `LIST_WAIT_MS`) for listings under way; a hung server never holds it longer. */
  async function ensureCatalog(signal?: AbortSignal): Promise<void> {
    await Promise.all([...pool.sessions.values()].map((session) => session.ensureTools(false, signal)));
    if (signal?.aborted) throw signal.reason;
    rebuild();
  }

  async function refreshAll(signal?: AbortSignal): Promise<void> {
    await Promise.all([...pool.sessions.values()].map((session) => session.relist(signal)));
    if (signal?.aborted) throw signal.reason;
    rebuild();
  }

  const toolMap = new ToolMap({
    agent: options.agent,
    pool,
    catalog,
    adapter,
    scrub,
    ...(platform.store ? { store: platform.store } : {}),
    closed: () => closed,
    deferred: () => current.deferredLoading,
    ensureCatalog,
    upToDate: rebuild,
  });

  let startup: Promise<void> = Promise.resolve();
  const startupAbort = new AbortController();

  const runtime: McpRuntime = {
    agent: options.agent,
    get warnings() {
      rebuild();
      return [...selection.warnings, ...catalog.namingWarnings];
    },
    invoker: adapter.invoker,
    tools: (toolOptions) => toolMap.tools(toolOptions?.signal),
    get deferred() {
      return current.deferredLoading;
    },
    toolNames: () => {
      rebuild();
      return catalog.entries.map((entry) => entry.exposed);
    },
    pinnedResources: () => [...pool.pinned],
    call: (name, args, callOptions) => toolMap.call(name, args, callOptions),
    diagnostics: () => pool.diagnostics(),
    async ready(readyOptions) {
      await (readyOptions?.signal ? waitFor(startup, { signal: readyOptions.signal }) : startup);
    },
    refresh: (refreshOptions) => refreshAll(refreshOptions?.signal),
    async reload(next, reloadOptions) {
      if (closed) throw new McpClientError('closed', 'The MCP runtime is closed.');
      selection = selectServers(next, options);
      current = next;
      const fresh = pool.replace(selection.servers);
      catalog.dirty = true;
      rebuild();
      const reloaded = pool.start(fresh, reloadOptions?.signal ?? new AbortController().signal, rebuildSoon);
      startup = Promise.all([startup, reloaded]).then(() => {});
      await reloaded;
      rebuild();
    },
    subscribe: (listener) => events.subscribe(listener),
    events: (eventOptions) => events.iterate(eventOptions?.signal),
    async rootsChanged() {
      if (!options.roots) return;
      await Promise.allSettled(
        [...pool.sessions.values()].map((session) => (session.state === 'connected' ? session.connection?.client.sendRootsListChanged() : undefined)),
      );
    },
    close() {
      if (closing) return closing;
      closed = true;
      startupAbort.abort();
      options.signal?.removeEventListener('abort', onAbort);
      adapter.close();
      closing = pool.close().finally(() => events.close());
      return closing;
    },
    [Symbol.asyncDispose]() {
      return runtime.close();
    },
  };
  const onAbort = () => void runtime.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  startup = pool.start([...pool.sessions.values()], startupAbort.signal, rebuildSoon).then(rebuild);
  if (options.waitForServers === false) return runtime;
  try {
    await (options.signal ? waitFor(startup, { signal: options.signal }) : startup);
  } catch (error) {
    startupAbort.abort();
    await runtime.close();
    throw new McpClientError('aborted', 'MCP runtime startup was aborted.', { cause: error });
  }
  return runtime;
}

/** One `catalog-changed` event per server whose exposed tools differ between two catalogs. */
function emitCatalogChanges(
  before: readonly { readonly exposed: string; readonly server: string }[],
  after: readonly { readonly exposed: string; readonly server: string }[],
  emit: (event: McpRuntimeEvent) => void,
): void {
  const byServer = (entries: typeof before) => {
    const map = new Map<string, Set<string>>();
    for (const entry of entries) {
      const names = map.get(entry.server) ?? new Set<string>();
      names.add(entry.exposed);
      map.set(entry.server, names);
    }
    return map;
  };
  const old = byServer(before);
  const now = byServer(after);
  for (const server of new Set([...old.keys(), ...now.keys()])) {
    const was = old.get(server) ?? new Set<string>();
    const is = now.get(server) ?? new Set<string>();
    const added = [...is].filter((name) => !was.has(name));
    const removed = [...was].filter((name) => !is.has(name));
    if (added.length > 0 || removed.length > 0) emit({ type: 'catalog-changed', server, added, removed });
  }
}
