import type { CommandDefinition, InvocationRequest } from '@capnode/capabilities';
import { isPlainObject, MAX_TIMER_MS } from '@capnode/toolkit';
import { capText } from '../redact.js';
import { toModelResult, type BinaryStore, type ModelToolResult } from '../results.js';
import type { McpCallOptions, McpTool } from '../types.js';
import type { CapabilityAdapter } from './capabilityAdapter.js';
import type { Catalog, CatalogEntry } from './catalog.js';
import type { ServerPool } from './serverPool.js';
import { SEARCH_DESCRIPTION, SEARCH_INPUT, SEARCH_RESULTS, SEARCH_TOOL, searchCatalog } from './toolSearch.js';

/** Added to a tool's own timeout for the pipeline's deadline, so the SDK's timeout answers first. */
const CALL_GRACE_MS = 5_000;

/** What the harness face is built from. */
export interface ToolMapOptions {
  readonly agent: string | undefined;
  readonly pool: ServerPool;
  readonly catalog: Catalog;
  readonly adapter: CapabilityAdapter;
  readonly scrub: (text: string) => string;
  readonly store?: BinaryStore;
  readonly closed: () => boolean;
  /** Whether `deferred_loading` is on (it follows reloads). */
  readonly deferred: () => boolean;
  /** Brings the catalog up to date (bounded; see the runtime). */
  readonly ensureCatalog: (signal?: AbortSignal) => Promise<void>;
  /** Applies a rebuild the runtime has queued for the end of the turn, at once (no I/O). */
  readonly upToDate: () => void;
}

const closedResult = (): ModelToolResult => ({ content: [{ type: 'text', text: 'The MCP runtime is closed.' }], isError: true, attachments: [] });

/**
 * The harness face of the runtime: imported tools as plain {@link McpTool} objects keyed by name,
 * each running through the invocation pipeline and shaped for a model; under deferred loading the
 * map holds `tool_search` and the tools it has found.
 */
export class ToolMap {
  /** Tools `tool_search` has returned (deferred loading). */
  readonly #activated = new Set<string>();
  readonly #options: ToolMapOptions;

  constructor(options: ToolMapOptions) {
    this.#options = options;
  }

  async tools(signal?: AbortSignal): Promise<Record<string, McpTool>> {
    const { catalog, closed, deferred, ensureCatalog } = this.#options;
    if (closed()) return {};
    await ensureCatalog(signal);
    const imported = deferred() ? catalog.entries.filter((entry) => this.#activated.has(entry.exposed)) : catalog.entries;
    const map: Record<string, McpTool> = Object.fromEntries(imported.map((entry) => [entry.exposed, this.#toolFor(entry)]));
    for (const command of catalog.builtins) map[command.name] = this.#builtinTool(command);
    if (deferred()) map[SEARCH_TOOL] = this.#searchTool();
    return map;
  }

  /** Calls one tool by its exposed name through the pipeline; never throws. */
  async call(name: string, args: unknown, callOptions: McpCallOptions | undefined): Promise<ModelToolResult> {
    const { agent, pool, catalog, adapter, scrub, store } = this.#options;
    if (this.#options.closed()) return closedResult();
    this.#options.upToDate();
    const entry = catalog.get(name);
    const timeoutMs = ((entry ? pool.sessions.get(entry.server)?.server.toolTimeoutMs : undefined) ?? 600_000) + CALL_GRACE_MS;
    const request: InvocationRequest = { command: name, args, transport: 'internal', timeoutMs, ...(agent === undefined ? {} : { caller: `agent:${agent}` }) };
    const signal = callOptions?.signal;
    const onProgress = callOptions?.onProgress;
    adapter.noteDirectCall(request, signal, performance.now() + Math.min(timeoutMs, MAX_TIMER_MS), onProgress !== undefined);
    const outcome = await adapter.invoker.invoke(request, { ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) });
    return toModelResult(outcome.result, { scrub, ...(store ? { store } : {}) });
  }

  #toolFor(entry: CatalogEntry): McpTool {
    const { pool } = this.#options;
    return {
      name: entry.exposed,
      description: entry.description,
      inputSchema: entry.inputSchema,
      server: entry.server,
      tool: entry.name,
      ...(entry.annotations ? { annotations: entry.annotations } : {}),
      parallelCalls: pool.sessions.get(entry.server)?.server.parallelCalls !== false,
      ...(entry.serverClaims ? { serverClaims: entry.serverClaims } : {}),
      execute: (args, callOptions) => this.call(entry.exposed, args, callOptions),
    };
  }

  #builtinTool(command: CommandDefinition): McpTool {
    return {
      name: command.name,
      description: command.description,
      inputSchema: command.inputSchema!,
      server: '*',
      tool: command.name,
      parallelCalls: true,
      execute: (args, callOptions) => this.call(command.name, args, callOptions),
    };
  }

  #searchTool(): McpTool {
    const { catalog, closed, ensureCatalog } = this.#options;
    return {
      name: SEARCH_TOOL,
      description: SEARCH_DESCRIPTION,
      inputSchema: SEARCH_INPUT,
      server: '*',
      tool: SEARCH_TOOL,
      parallelCalls: true,
      execute: async (args, callOptions) => {
        if (closed()) return closedResult();
        await ensureCatalog(callOptions?.signal);
        const input = isPlainObject(args) ? args : {};
        const query = typeof input.query === 'string' ? input.query.trim() : '';
        const limit = typeof input.max_results === 'number' && input.max_results > 0 ? Math.min(50, Math.floor(input.max_results)) : SEARCH_RESULTS;
        const found = searchCatalog(catalog.entries, (name) => catalog.get(name), query, limit);
        for (const entry of found) this.#activated.add(entry.exposed);
        const tools = found.map((entry) => ({ name: entry.exposed, description: entry.description, inputSchema: entry.inputSchema }));
        return {
          content: [{ type: 'text', text: tools.length ? JSON.stringify(tools, null, 2) : `No imported tool matches '${capText(query, 100)}'.` }],
          isError: false,
          attachments: [],
          structuredContent: { tools },
        };
      },
    };
  }
}
