import {
  CapabilityError,
  createInvoker,
  isCapabilityError,
  createRegistry,
  type Capability,
  type CommandContext,
  type CommandDefinition,
  type CommandResult,
  type Content,
  type InputJsonSchema,
  type InvocationHook,
  type InvocationRequest,
  type Invoker,
  type ProgressUpdate,
  type Registry,
} from '@capnode/capabilities';
import { Client, SdkError, SdkErrorCode, type Implementation, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { z } from 'zod';
import type { McpConfig, McpServerConfig, McpTransportKind } from './config.js';
import { McpClientError } from './errors.js';
import { resolveAgentGrant } from './grants.js';
import { assignToolNames, type NamedTool } from './naming.js';
import { createPolicyHook, createToolPolicy, type Approver, type ToolPolicy } from './policy.js';
import { createServerToolCommands, PROMPTS_TOOL, readResource, RESOURCES_TOOL, type ServerAccess } from './internal/serverTools.js';
import { forwardProgress, routeProgress, withProgress } from './internal/progress.js';
import { httpStatusOf } from './internal/sdkSeam.js';
import { republishTool, type RepublishedTool } from './internal/serverClaims.js';
import { boundListedTool, boundToolContent, CONTENT_LIMITS, safeJson } from './internal/contentLimits.js';
import { capText, collectSecrets, createSecretScrubber } from './redact.js';
import { toModelResult, type BinaryStore, type ModelToolResult } from './results.js';

/** Where the runtime reports what happens; nothing is ever written to stdout. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Drops debug and info; warnings and errors go to stderr. */
export const defaultLogger: Logger = {
  debug() {},
  info() {},
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
};

/** An open connection to one server. */
export interface McpConnection {
  readonly client: Client;
  /** The transport actually in use (`http` may have fallen back to `sse`). */
  readonly transport: McpTransportKind;
  /** Closes the client and transport; for stdio, ends the server's whole process group. */
  close(): Promise<void>;
}

/** What a connector gets to open one server. */
export interface ConnectRequest {
  readonly server: McpServerConfig;
  /** A fresh client with the runtime's handlers installed; call once per attempt. */
  createClient(): Client;
  /** Aborted at the connect timeout or when the runtime closes. */
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
}

/** Opens a connection for one server entry; rejects when it cannot (the runtime records a diagnostic). */
export type McpConnector = (request: ConnectRequest) => Promise<McpConnection>;

/** Per-server state as a host or CLI shows it. */
export type ServerState = 'connecting' | 'connected' | 'failed' | 'disconnected' | 'paused' | 'closed';

/** What is known about one granted server. */
export interface ServerDiagnostic {
  readonly server: string;
  readonly transport: McpTransportKind;
  readonly state: ServerState;
  /** Milliseconds of the last successful connect (spawn/handshake). */
  readonly connectMs?: number;
  readonly toolCount: number;
  /** Last failure, scrubbed of secrets and capped. */
  readonly error?: string;
  /** Non-fatal: skipped tools, partial listings. */
  readonly warnings: readonly string[];
  /** ISO time when a paused server accepts calls again. */
  readonly pausedUntil?: string;
  readonly serverInfo?: { readonly name: string; readonly version: string };
}

/** One imported tool, as a plain object any agent harness can use. */
export interface McpTool {
  /** `<server>__<tool>`, unique case-insensitively. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: InputJsonSchema;
  /** The owning server, or `*` for the runtime's own tools (`mcp_resources`, `mcp_prompts`, `tool_search`). */
  readonly server: string;
  /** The tool's own name on its server. */
  readonly tool: string;
  /**
   * The server's annotations when the server is `trusted`; otherwise only its title, prefixed with
   * the server name (the hints are in {@link McpTool.serverClaims}).
   */
  readonly annotations?: Record<string, unknown>;
  /**
   * `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint` as an untrusted server declared
   * them: the server's claim, not verified. They never relax capnode's policy.
   */
  readonly serverClaims?: Readonly<Record<string, unknown>>;
  /** Runs the tool through the invocation pipeline (policy, approval, audit) and shapes the result for a model. */
  execute(args: unknown, options?: McpCallOptions): Promise<ModelToolResult>;
}

/** Options of one tool call. */
export interface McpCallOptions {
  readonly signal?: AbortSignal;
  /**
   * Receives the server's progress reports (`notifications/progress`; message scrubbed and capped).
   * Given, the request carries a progress token; the deadline stays `tool_timeout_secs`.
   */
  readonly onProgress?: (update: ProgressUpdate) => void;
}

export interface McpRuntimeOptions {
  /** The agent whose bundles decide which servers are connected. */
  readonly agent?: string;
  /** Connect every enabled server regardless of grants (for tooling such as `capnode servers test`). */
  readonly allServers?: boolean;
  /** Aborting cancels startup, and closes the runtime once started. */
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
  /**
   * Run imported tools through this pipeline (the host's, so built-in capabilities and imported
   * tools share policy, approval and audit). The runtime registers its tools into `invoker.registry`
   * and adds its policy hook. Default: a private registry and invoker.
   */
  readonly invoker?: Invoker;
  /** Extra hooks (audit, approval) for the private invoker; ignored when `invoker` is given. */
  readonly hooks?: readonly InvocationHook[];
  /** Asked before calls the risk profile does not auto-approve; without it such calls are refused. */
  readonly approve?: Approver;
  /** A per-run allow-list: a strict intersection with the risk profile. */
  readonly runAllowList?: readonly string[];
  /** How this client introduces itself to servers. */
  readonly clientInfo?: Implementation;
  /**
   * Whether `createMcpRuntime` waits until every server has connected or failed (default `true`).
   * With `false` it resolves at once and each server's tools appear as that server becomes ready;
   * `runtime.ready()` tells when startup is over. Either way, tools registered into `invoker`'s
   * registry are published per server as soon as that server is ready.
   */
  readonly waitForServers?: boolean;
}

/** The runtime of one agent session: its connected servers, their tools, and the calls into them. */
export interface McpRuntime extends AsyncDisposable {
  readonly agent: string | undefined;
  /** Grant and naming warnings (unknown bundles, renamed collisions). */
  readonly warnings: readonly string[];
  /** The pipeline calls go through; its registry holds the imported tools. */
  readonly invoker: Invoker;
  /** The imported tools the agent may use, keyed by name; re-lists servers whose tools changed. */
  tools(options?: { readonly signal?: AbortSignal }): Promise<Record<string, McpTool>>;
  /** Calls one imported tool by its exposed name. Never throws; failures are error results. */
  call(name: string, args?: unknown, options?: McpCallOptions): Promise<ModelToolResult>;
  /** Per-server state, including servers that failed to start. */
  diagnostics(): readonly ServerDiagnostic[];
  /**
   * Resolves once every server of the latest startup or `reload()` has connected (tools listed,
   * pinned resources read) or failed. Never rejects.
   */
  ready(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** True when `deferred_loading` is on: `tools()` then holds `tool_search` and the tools it found. */
  readonly deferred: boolean;
  /** Every imported tool name the agent may use (for a system prompt under deferred loading). */
  toolNames(): readonly string[];
  /** `pinned_resources`, read once at start, each wrapped as untrusted external content. */
  pinnedResources(): readonly PinnedResource[];
  /** Re-lists every connected server's tools now. */
  refresh(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /**
   * Applies a new configuration without disturbing what did not change: a server whose entry is
   * unchanged and still granted keeps its session (no reconnect, no re-spawn); changed or newly
   * granted servers connect; servers no longer granted are closed. Grants, risk profile, naming and
   * secrets follow the new config.
   */
  reload(config: McpConfig, options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Disconnects everything; afterwards every call fails at once. Idempotent. */
  close(): Promise<void>;
}

/** One pinned resource as read at start. */
export interface PinnedResource {
  readonly server: string;
  readonly uri: string;
  /** Provenance-wrapped (`trust="untrusted-external"`) and length-bounded. */
  readonly text: string;
}

/** Internal pieces a platform entry point supplies. */
export interface RuntimePlatform {
  readonly connector: McpConnector;
  /** Where binary results go, or none (binary items then degrade to markers). */
  readonly store?: BinaryStore;
}

const PAUSE_AFTER_FAILURES = 3;
const PAUSE_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;
const MAX_LIST_PAGES = 100;
const MAX_DESCRIPTION = CONTENT_LIMITS.toolDescription;
const CALL_GRACE_MS = 5_000;
const REFRESH_DEBOUNCE_MS = 250;
const MAX_WARNINGS = 20;
const DEFAULT_CLIENT_INFO: Implementation = { name: 'capnode', version: '0.1.0' };
const SEARCH_TOOL = 'tool_search';
const SEARCH_RESULTS = 10;

const listPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
/** What the runtime reads from a `tools/call` result; other fields pass through untouched. */
interface CallResult {
  readonly content?: unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly [extra: string]: unknown;
}

/**
 * The shape check for `tools/call` results, as a hand-written Standard Schema: it runs on every call,
 * and a zod object parse (which also copies the result) costs several times more for the same check.
 */
const callResultSchema: StandardSchemaV1<unknown, CallResult> = {
  '~standard': {
    version: 1,
    vendor: 'capnode',
    validate(value) {
      if (!isRecord(value)) return { issues: [{ message: `Invalid input: expected object, received ${describeType(value)}` }] };
      if (value.content !== undefined && !Array.isArray(value.content)) return { issues: [{ message: `Invalid input: expected array, received ${describeType(value.content)}`, path: ['content'] }] };
      if (value.isError !== undefined && typeof value.isError !== 'boolean') return { issues: [{ message: `Invalid input: expected boolean, received ${describeType(value.isError)}`, path: ['isError'] }] };
      return { value: value as CallResult };
    },
  },
};

function describeType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

interface ListedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: InputJsonSchema;
  readonly annotations?: Record<string, unknown>;
  /** What the content limits changed, for the server's diagnostic warnings. */
  readonly degraded?: string;
}

interface CatalogEntry extends Omit<ListedTool, 'annotations'>, RepublishedTool {
  readonly exposed: string;
  readonly server: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.max(0, attempt - 1));
}

/** Validates one listed tool; returns a reason when it must be skipped. */
function readTool(raw: unknown): ListedTool | string {
  if (!isRecord(raw)) return 'not an object';
  const { name, description, inputSchema, annotations } = raw;
  if (typeof name !== 'string' || name.length === 0) return 'missing name';
  if (name.length > 256) return `name longer than 256 characters`;
  if (!isRecord(inputSchema) || inputSchema.type !== 'object') return `'${capText(name, 80)}' has no object inputSchema`;
  const text = capText(typeof description === 'string' ? description : '', MAX_DESCRIPTION);
  return { name, ...boundListedTool(text, inputSchema, isRecord(annotations) ? annotations : undefined) } as ListedTool;
}

class ServerSession {
  readonly server: McpServerConfig;
  connection: McpConnection | undefined;
  /** Capabilities the server declared at its last successful connect. */
  capabilities: { resources: boolean; prompts: boolean } = { resources: false, prompts: false };
  state: ServerState = 'connecting';
  tools: readonly ListedTool[] = [];
  toolsStale = true;
  warnings: string[] = [];
  /** Problems reading `pinned_resources` at start. */
  readonly pinnedWarnings: string[] = [];
  lastError: string | undefined;
  connectMs: number | undefined;
  failures = 0;
  lastFailureTimedOut = false;
  pausedUntil = 0;
  attempt = 0;
  nextConnectAt = 0;
  readonly abort = new AbortController();
  #connecting: Promise<McpConnection> | undefined;
  #listing: Promise<void> | undefined;
  /** Rejecters of the calls in flight, failed at once when the session closes. */
  readonly #calls = new Set<(error: Error) => void>();
  #lastTransportError: string | undefined;
  readonly #host: SessionHost;

  constructor(server: McpServerConfig, host: SessionHost) {
    this.server = server;
    this.#host = host;
  }

  get closed(): boolean {
    return this.abort.signal.aborted;
  }

  diagnostic(): ServerDiagnostic {
    const paused = this.pausedUntil > Date.now();
    const info = this.connection?.client.getServerVersion();
    return {
      server: this.server.name,
      transport: this.connection?.transport ?? this.server.transport,
      state: this.closed ? 'closed' : paused ? 'paused' : this.state,
      toolCount: this.tools.length,
      warnings: [...this.warnings, ...this.pinnedWarnings],
      ...(this.connectMs === undefined ? {} : { connectMs: Math.round(this.connectMs) }),
      ...(this.lastError === undefined ? {} : { error: this.lastError }),
      ...(paused ? { pausedUntil: new Date(this.pausedUntil).toISOString() } : {}),
      ...(info ? { serverInfo: { name: capText(String(info.name), 100), version: capText(String(info.version), 50) } } : {}),
    };
  }

  /** Connects unless connected; concurrent callers share one attempt; honours the reconnect backoff. */
  ensureConnected(signal?: AbortSignal): Promise<McpConnection> {
    if (this.closed) return Promise.reject(this.#host.closedError());
    if (this.connection && this.state === 'connected') return Promise.resolve(this.connection);
    if (!this.#connecting) {
      const wait = this.nextConnectAt - Date.now();
      if (wait > 0) {
        return Promise.reject(
          new CapabilityError(
            'failed',
            `MCP server '${this.server.name}' is not connected${this.lastError ? ` (${this.lastError})` : ''}; next connection attempt after ${new Date(this.nextConnectAt).toISOString()}.`,
          ),
        );
      }
      this.#connecting = this.#connect().finally(() => {
        this.#connecting = undefined;
      });
    }
    return signal ? raceAbort(this.#connecting, signal) : this.#connecting;
  }

  async #connect(): Promise<McpConnection> {
    const server = this.server;
    const timeoutMs = server.connect_timeout_secs * 1000;
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]);
    const started = performance.now();
    this.state = this.attempt === 0 ? 'connecting' : this.state;
    this.#lastTransportError = undefined;
    const attempt = this.#host.connector({
      server,
      createClient: () => this.#createClient(),
      signal,
      timeoutMs,
      logger: this.#host.logger,
      scrub: this.#host.scrub,
    });
    let abandoned = false;
    attempt.then(
      (late) => {
        if (abandoned) this.#host.track(late.close());
      },
      () => {},
    );
    try {
      const connection = await raceAbort(attempt, signal);
      if (this.closed) {
        await connection.close().catch(() => {});
        throw this.#host.closedError();
      }
      this.connection = connection;
      const declared = connection.client.getServerCapabilities();
      this.capabilities = { resources: Boolean(declared?.resources), prompts: Boolean(declared?.prompts) };
      this.state = 'connected';
      this.connectMs = performance.now() - started;
      this.attempt = 0;
      this.nextConnectAt = 0;
      this.lastError = undefined;
      this.toolsStale = true;
      return connection;
    } catch (error) {
      abandoned = true;
      if (this.closed) throw this.#host.closedError();
      const timedOut = signal.aborted || (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
      this.attempt += 1;
      this.nextConnectAt = Date.now() + backoffMs(this.attempt);
      this.state = this.connectMs === undefined ? 'failed' : 'disconnected';
      const detail = timedOut ? `did not finish connecting within ${server.connect_timeout_secs} s` : this.#host.describe(error);
      const transportError = this.#lastTransportError;
      const sameError = transportError === capText(this.#host.scrub(errorText(error)), 300);
      this.lastError = capText(transportError && !timedOut && !sameError ? `${detail}; ${transportError}` : detail);
      this.#host.logger.warn(`mcp server '${server.name}' failed to connect: ${this.lastError}`);
      throw new CapabilityError('failed', `MCP server '${server.name}' is not available: ${this.lastError}`, { cause: error });
    }
  }

  #createClient(): Client {
    const client = new Client(this.#host.clientInfo, { capabilities: {} });
    routeProgress(client);
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (this.connection?.client !== client) return;
      this.toolsStale = true;
      this.#host.toolsChanged();
    });
    client.setNotificationHandler('notifications/message', (notification) => {
      const data = notification.params.data;
      const text = typeof data === 'string' ? data : safeJson(data ?? null, CONTENT_LIMITS.contentMeta);
      this.#host.logger.debug(`[${this.server.name} ${notification.params.level}] ${capText(this.#host.scrub(text ?? ''), 2_000)}`);
    });
    client.onerror = (error) => {
      this.#lastTransportError = capText(this.#host.scrub(errorText(error)), 300);
      this.#host.logger.debug(`mcp server '${this.server.name}': ${this.#lastTransportError}`);
    };
    client.onclose = () => {
      if (this.connection?.client !== client) return;
      const connection = this.connection;
      this.connection = undefined;
      if (this.closed) return;
      this.state = 'disconnected';
      this.attempt += 1;
      this.nextConnectAt = Date.now() + backoffMs(this.attempt);
      this.lastError = capText(`the connection closed${this.#lastTransportError ? `: ${this.#lastTransportError}` : ''}`);
      this.#host.logger.warn(`mcp server '${this.server.name}' disconnected: ${this.lastError}`);
      this.#host.track(connection.close());
    };
    return client;
  }

  /** Re-lists tools when stale; concurrent callers (and notification storms) share one listing. */
  ensureTools(): Promise<void> {
    if (!this.toolsStale || !this.connection || this.closed) return Promise.resolve();
    this.#listing ??= this.#listTools().finally(() => {
      this.#listing = undefined;
    });
    return this.#listing;
  }

  async #listTools(): Promise<void> {
    const connection = this.connection!;
    const client = connection.client;
    this.toolsStale = false;
    const warnings: string[] = [];
    if (!client.getServerCapabilities()?.tools) {
      this.#setTools([], warnings);
      return;
    }
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.server.connect_timeout_secs * 1000)]);
    const listed: ListedTool[] = [];
    const seen = new Set<string>();
    const cursors = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    try {
      do {
        pages += 1;
        if (pages > MAX_LIST_PAGES) {
          warnings.push(`tool listing stopped after ${MAX_LIST_PAGES} pages`);
          break;
        }
        const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, listPageSchema, { signal, timeout: this.server.connect_timeout_secs * 1000 });
        page.tools.forEach((raw, index) => {
          const tool = readTool(raw);
          if (typeof tool === 'string') warnings.push(`tool #${listed.length + index + 1} skipped: ${tool}`);
          else if (seen.has(tool.name)) warnings.push(`duplicate tool '${capText(tool.name, 80)}' skipped`);
          else {
            seen.add(tool.name);
            listed.push(tool);
            if (tool.degraded) warnings.push(`tool '${capText(tool.name, 80)}': ${tool.degraded}`);
          }
        });
        cursor = page.nextCursor;
        if (cursor !== undefined && cursors.has(cursor)) {
          warnings.push('tool listing stopped: the server repeated a page cursor');
          break;
        }
        if (cursor !== undefined) cursors.add(cursor);
      } while (cursor !== undefined);
    } catch (error) {
      if (this.closed || this.connection !== connection) return;
      const detail = capText(this.#host.describe(error), 300);
      warnings.push(pages === 1 ? `tools/list failed: ${detail}` : `tools/list failed on page ${pages}; kept the first ${listed.length} tools: ${detail}`);
      if (pages === 1) {
        this.#host.logger.warn(`mcp server '${this.server.name}': tools/list failed: ${detail}`);
        this.warnings = warnings.slice(0, MAX_WARNINGS);
        this.toolsStale = true;
        return;
      }
    }
    if (this.connection !== connection) return;
    this.#setTools(listed, warnings);
  }

  #setTools(tools: readonly ListedTool[], warnings: string[]): void {
    this.tools = tools;
    this.warnings = warnings.slice(0, MAX_WARNINGS);
    for (const warning of this.warnings) this.#host.logger.warn(`mcp server '${this.server.name}': ${warning}`);
    this.#host.catalogChanged();
  }

  /** Records a failed call; the third in a row pauses the server (and recycles a timed-out session). */
  recordFailure(timedOut: boolean): void {
    this.failures += 1;
    this.lastFailureTimedOut = timedOut;
    if (this.failures < PAUSE_AFTER_FAILURES) return;
    this.pausedUntil = Date.now() + PAUSE_MS;
    this.failures = 0;
    this.#host.logger.warn(`mcp server '${this.server.name}' paused after ${PAUSE_AFTER_FAILURES} consecutive failures until ${new Date(this.pausedUntil).toISOString()}`);
    if (timedOut) this.recycle('timed out repeatedly');
  }

  recordSuccess(): void {
    this.failures = 0;
  }

  /** Drops the session so the next call reconnects; the failed call is not replayed. */
  recycle(reason: string): void {
    const connection = this.connection;
    if (!connection) return;
    this.connection = undefined;
    this.state = 'disconnected';
    this.nextConnectAt = 0;
    this.lastError = capText(`session recycled: ${reason}`);
    this.#host.logger.warn(`mcp server '${this.server.name}': ${this.lastError}`);
    this.#host.track(connection.close());
  }

  /**
   * Resolves or rejects as `call` does, but rejects with the closed error as soon as the session
   * closes (the connection's own close may wait for a slow process to exit).
   */
  settleOnClose<T>(call: Promise<T>): Promise<T> {
    if (this.closed) {
      call.catch(() => {});
      return Promise.reject(this.#host.closedError());
    }
    return new Promise<T>((resolve, reject) => {
      const calls = this.#calls;
      calls.add(reject);
      call.then(
        (value) => {
          calls.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          calls.delete(reject);
          reject(error as Error);
        },
      );
    });
  }

  async close(): Promise<void> {
    this.abort.abort();
    if (this.#calls.size > 0) {
      const error = this.#host.closedError();
      for (const reject of this.#calls) reject(error);
      this.#calls.clear();
    }
    const connection = this.connection;
    this.connection = undefined;
    this.state = 'closed';
    const pending = this.#connecting;
    await Promise.allSettled([connection?.close(), pending]);
  }
}

interface SessionHost {
  readonly connector: McpConnector;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
  readonly clientInfo: Implementation;
  describe(error: unknown): string;
  closedError(): Error;
  toolsChanged(): void;
  catalogChanged(): void;
  track(promise: Promise<unknown>): void;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/**
 * Creates the runtime over a platform (connector and binary store). `@capnode/mcp-client/node`
 * wraps this as `createMcpRuntime`.
 */
export async function createRuntime(config: McpConfig, options: McpRuntimeOptions, platform: RuntimePlatform): Promise<McpRuntime> {
  const logger = options.logger ?? defaultLogger;
  if (options.signal?.aborted) throw new McpClientError('aborted', 'MCP runtime startup was aborted.', { cause: options.signal.reason });
  const agent = options.agent;
  const select = (from: McpConfig) => {
    const grant = resolveAgentGrant(from, agent ?? '');
    return {
      servers: options.allServers ? from.servers.filter((s) => s.enabled && from.enabled) : agent === undefined ? [] : grant.servers,
      warnings: options.allServers ? [] : agent === undefined ? ['no agent given; no MCP servers are connected'] : [...grant.warnings],
      policy: createToolPolicy(grant.profile, options.runAllowList ? { runAllowList: options.runAllowList } : {}),
      scrub: createSecretScrubber(collectSecrets(from.servers)),
    };
  };
  let current = config;
  let selection = select(config);
  const scrub = (text: string) => selection.scrub(text);
  const policy: ToolPolicy = {
    get profile() {
      return selection.policy.profile;
    },
    isAuthorized: (name) => selection.policy.isAuthorized(name),
    needsApproval: (name) => selection.policy.needsApproval(name),
  };
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  let closing: Promise<void> | undefined;
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

  const describe = (error: unknown): string => {
    if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) return 'the connection closed';
    return capText(scrub(errorText(error)), 400);
  };
  const closedError = () => new CapabilityError('failed', 'The MCP runtime is closed.');

  const host: SessionHost = {
    connector: platform.connector,
    logger,
    scrub,
    clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
    describe,
    closedError,
    toolsChanged() {
      catalogDirty = true;
      if (attached && !closed && !refreshTimer) {
        refreshTimer = setTimeout(() => {
          refreshTimer = undefined;
          void refreshAll().catch(() => {});
        }, REFRESH_DEBOUNCE_MS);
        refreshTimer.unref?.();
      }
    },
    catalogChanged() {
      catalogDirty = true;
    },
    track(promise) {
      const tracked = promise.catch(() => {}).finally(() => pending.delete(tracked));
      pending.add(tracked);
    },
  };
  const sessions = new Map<string, ServerSession>(selection.servers.map((server) => [server.name, new ServerSession(server, host)]));

  const registry: Registry = options.invoker?.registry ?? createRegistry();
  const attached = options.invoker !== undefined;
  let catalog: CatalogEntry[] = [];
  let byName = new Map<string, CatalogEntry>();
  let catalogDirty = true;
  let namingWarnings: string[] = [];
  /** Names handed out so far: kept for their tools while those stay listed, whatever order servers arrive in. */
  let published: readonly NamedTool[] = [];
  let startup: Promise<void> = Promise.resolve();
  const startupAbort = new AbortController();
  let capability: Capability | undefined;
  let serverParts = new Map<string, string>();
  let builtins: CommandDefinition[] = [];
  const pinned: PinnedResource[] = [];
  const activated = new Set<string>();
  const access = (): ServerAccess[] =>
    [...sessions.values()].map((session) => ({
      name: session.server.name,
      part: serverParts.get(session.server.name) ?? session.server.name,
      timeoutMs: session.server.tool_timeout_secs * 1000,
      scrub,
      supports: (which) => session.capabilities[which],
      connect: async (signal) => (await session.ensureConnected(signal)).client,
    }));
  const serverTools = createServerToolCommands(access);

  const lookup = (name: string) => {
    const entry = byName.get(name.toLowerCase());
    if (entry) return { server: entry.server, tool: entry.name };
    return builtins.some((command) => command.name === name) ? { server: '*', tool: name } : undefined;
  };
  const policyHook = createPolicyHook({ policy, lookup, ...(options.approve ? { approve: options.approve } : {}) });
  const invoker: Invoker = options.invoker ?? createInvoker({ registry, hooks: [policyHook, ...(options.hooks ?? [])] });
  const removeHook = options.invoker ? options.invoker.use(policyHook) : () => {};

  /**
   * Calls that came in through `runtime.call`, keyed by their request: the caller's own signal and
   * the pipeline's deadline. While the SDK's timeout ends a call before that deadline, the caller's
   * signal cancels it just as the pipeline's would, so no per-call AbortSignal has to be made.
   */
  const directCalls = new WeakMap<InvocationRequest, { readonly signal: AbortSignal | undefined; readonly deadline: number; readonly progress: boolean }>();

  /** The signal that cancels one tools/call (the SDK sends notifications/cancelled when it aborts). */
  function callSignal(context: CommandContext, timeoutMs: number): AbortSignal | undefined {
    const direct = directCalls.get(context.request);
    if (direct && direct.deadline - performance.now() >= timeoutMs) return direct.signal;
    return context.signal;
  }

  /**
   * Progress of a tools/call goes to the caller's `context.progress`: always for calls from other
   * transports (the host's clients; a no-op there unless they asked), for `runtime.call` only when it
   * was given `onProgress`, so a harness call without it sends no progress token.
   */
  function progressOf(context: CommandContext): ReturnType<typeof forwardProgress> | undefined {
    const direct = directCalls.get(context.request);
    return direct && !direct.progress ? undefined : forwardProgress(context.progress, scrub);
  }

  async function callServer(serverName: string, toolName: string, args: unknown, context: CommandContext): Promise<CommandResult> {
    if (closed) throw closedError();
    const session = sessions.get(serverName);
    if (!session || session.closed) throw closedError();
    if (session.pausedUntil !== 0 && session.pausedUntil > Date.now()) {
      const until = new Date(session.pausedUntil);
      const seconds = Math.ceil((session.pausedUntil - Date.now()) / 1000);
      throw new CapabilityError('busy', `MCP server '${serverName}' is paused after repeated tool failures; retry after ${until.toISOString()} (in ${seconds} s).`);
    }
    const connection = session.connection && session.state === 'connected' ? session.connection : await session.ensureConnected(context.signal);
    if (session.toolsStale) {
      await raceAbort(session.ensureTools(), context.signal);
      rebuildCatalog();
      if (!session.tools.some((tool) => tool.name === toolName)) {
        throw new CapabilityError('unknown_command', `MCP server '${serverName}' no longer offers the tool '${toolName}'.`);
      }
    }
    const timeoutSecs = session.server.tool_timeout_secs;
    const signal = callSignal(context, timeoutSecs * 1000);
    try {
      // Session close rejects the call through `settleOnClose` rather than a combined signal:
      // AbortSignal.any costs tens of microseconds per call on Node 20.
      const result = await session.settleOnClose(
        withProgress(connection.client, progressOf(context), (meta) =>
          connection.client.request(
            { method: 'tools/call', params: { name: toolName, arguments: isRecord(args) ? args : {}, ...(meta ? { _meta: meta } : {}) } },
            callResultSchema,
            signal ? { signal, timeout: timeoutSecs * 1000 } : { timeout: timeoutSecs * 1000 },
          ),
        ),
      );
      session.recordSuccess();
      return toCommandResult(result);
    } catch (error) {
      if (session.closed || closed) throw closedError();
      if (signal?.aborted) throw new CapabilityError('cancelled', `${serverName}__${toolName} was cancelled.`);
      const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
      const status = httpStatusOf(error);
      if (status === 404 && connection.transport !== 'stdio') session.recycle('the server reported the session as expired (HTTP 404)');
      session.recordFailure(timedOut);
      if (timedOut) throw new CapabilityError('timeout', `MCP server '${serverName}' did not answer '${toolName}' within ${timeoutSecs} s.`);
      const lost = error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
      const detail = lost ? (session.lastError ?? 'the connection closed') : describe(error);
      throw new CapabilityError('failed', capText(`MCP server '${serverName}' failed '${toolName}': ${detail}`));
    }
  }

  function toCommandResult(result: CallResult): CommandResult {
    const bounded = boundToolContent(result.content ?? [], result.structuredContent);
    const content = bounded.content as Content[];
    if (result.isError) {
      const texts = content.filter((item) => isRecord(item) && item.type === 'text' && typeof item.text === 'string').map((item) => (item as { text: string }).text);
      const omitted = content.length - texts.length;
      const message = `${texts.join('\n') || 'The tool reported an error.'}${omitted > 0 ? ` [${omitted} non-text item(s) omitted]` : ''}`;
      return { ok: false, error: { code: 'failed', message: capText(scrub(message)) } };
    }
    const structured = bounded.structuredContent;
    return { ok: true, content, ...(structured ? { structured } : {}) };
  }

  async function guarded(run: () => unknown): Promise<CommandResult> {
    if (closed) throw closedError();
    try {
      return (await run()) as CommandResult;
    } catch (error) {
      if (isCapabilityError(error)) throw error;
      throw new CapabilityError('failed', capText(describe(error)));
    }
  }

  function rebuildCatalog(): void {
    if (!catalogDirty) return;
    catalogDirty = false;
    const ordered = [...sessions.values()];
    const reserved = [
      RESOURCES_TOOL,
      PROMPTS_TOOL,
      SEARCH_TOOL,
      ...(attached ? registry.commands().filter((command) => !capability?.commands.includes(command.definition)).map((c) => c.name) : []),
    ];
    const naming = assignToolNames(
      ordered.map((session) => ({ server: session.server.name, tools: session.tools.map((tool) => tool.name) })),
      reserved,
      { keep: published },
    );
    published = naming.tools;
    const known = new Set(namingWarnings);
    namingWarnings = [...naming.warnings];
    serverParts = new Map(naming.serverParts);
    const sessionList = [...sessions.values()];
    builtins = [
      ...(sessionList.some((session) => session.capabilities.resources) ? [serverTools.resources] : []),
      ...(sessionList.some((session) => session.capabilities.prompts) ? [serverTools.prompts] : []),
    ]
      .filter((command) => policy.isAuthorized(command.name))
      .map((command) => ({ ...command, execute: (args: unknown, context) => guarded(() => command.execute(args, context)) }) satisfies CommandDefinition);
    for (const warning of naming.warnings) if (!known.has(warning)) logger.warn(`mcp: ${warning}`);
    const toolsByServer = new Map(ordered.map((session) => [session.server.name, new Map(session.tools.map((tool) => [tool.name, tool]))]));
    catalog = naming.tools.flatMap((named) => {
      const tool = toolsByServer.get(named.server)?.get(named.tool);
      if (!tool || !policy.isAuthorized(named.name)) return [];
      const trusted = sessions.get(named.server)?.server.trusted === true;
      return [{ ...tool, ...republishTool(named.server, tool.description, tool.annotations, trusted), exposed: named.name, server: named.server }];
    });
    byName = new Map(catalog.map((entry) => [entry.exposed.toLowerCase(), entry]));
    syncRegistry();
  }

  function syncRegistry(): void {
    if (closed) return;
    const commands: CommandDefinition[] = catalog.map((entry) => ({
      name: entry.exposed,
      description: entry.description,
      inputSchema: entry.inputSchema,
      ...(entry.commandAnnotations ? { annotations: entry.commandAnnotations } : {}),
      localOnly: true,
      execute: (args: unknown, context) => callServer(entry.server, entry.name, args, context),
    }));
    const next: Capability = { category: 'mcp', commands: [...commands, ...builtins] };
    if (capability) registry.unregister(capability);
    capability = undefined;
    try {
      registry.register(next);
      capability = next;
    } catch (error) {
      logger.error(`mcp: imported tools could not be registered: ${errorText(error)}`);
    }
  }

  async function ensureCatalog(signal?: AbortSignal): Promise<void> {
    const listings = Promise.all([...sessions.values()].map((session) => session.ensureTools()));
    await (signal ? raceAbort(listings, signal) : listings);
    rebuildCatalog();
  }

  async function refreshAll(signal?: AbortSignal): Promise<void> {
    for (const session of sessions.values()) session.toolsStale = true;
    await ensureCatalog(signal);
  }

  function toolFor(entry: CatalogEntry): McpTool {
    return {
      name: entry.exposed,
      description: entry.description,
      inputSchema: entry.inputSchema,
      server: entry.server,
      tool: entry.name,
      ...(entry.annotations ? { annotations: entry.annotations } : {}),
      ...(entry.serverClaims ? { serverClaims: entry.serverClaims } : {}),
      execute: (args, callOptions) => runtime.call(entry.exposed, args, callOptions),
    };
  }

  function builtinTool(command: CommandDefinition): McpTool {
    return {
      name: command.name,
      description: command.description,
      inputSchema: command.inputSchema!,
      server: '*',
      tool: command.name,
      execute: (args, callOptions) => runtime.call(command.name, args, callOptions),
    };
  }

  function searchTool(): McpTool {
    return {
      name: SEARCH_TOOL,
      description: 'Finds imported MCP tools and returns their full schemas; found tools become callable. Query with keywords, or "select:<name>,<name>" for exact names.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'number' } }, required: ['query'] },
      server: '*',
      tool: SEARCH_TOOL,
      async execute(args, callOptions) {
        if (closed) return { content: [{ type: 'text', text: 'The MCP runtime is closed.' }], isError: true, attachments: [] };
        await ensureCatalog(callOptions?.signal);
        const input = isRecord(args) ? args : {};
        const query = typeof input.query === 'string' ? input.query.trim() : '';
        const limit = typeof input.max_results === 'number' && input.max_results > 0 ? Math.min(50, Math.floor(input.max_results)) : SEARCH_RESULTS;
        const found = searchCatalog(query, limit);
        for (const entry of found) activated.add(entry.exposed);
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

  function searchCatalog(query: string, limit: number): CatalogEntry[] {
    if (query.toLowerCase().startsWith('select:')) {
      const wanted = query.slice('select:'.length).split(',').map((name) => name.trim().toLowerCase());
      return wanted.flatMap((name) => byName.get(name) ?? []).slice(0, limit);
    }
    const terms = query.toLowerCase().split(/[\s,]+/).filter(Boolean);
    if (terms.length === 0) return [];
    return catalog
      .map((entry) => {
        const haystack = `${entry.exposed} ${entry.description}`.toLowerCase();
        return { entry, score: terms.filter((term) => haystack.includes(term)).length + (terms.some((t) => entry.exposed.toLowerCase().includes(t)) ? 0.5 : 0) };
      })
      .filter((hit) => hit.score >= 1)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map((hit) => hit.entry);
  }

  /**
   * Connects and lists the given sessions in parallel. Each server's tools are published (catalog
   * rebuilt, registry updated) the moment that server is ready, independent of the others; a server
   * that fails or hangs becomes a diagnostic. Resolves when every one has settled.
   */
  async function start(list: readonly ServerSession[], signal: AbortSignal): Promise<void> {
    await Promise.all(
      list.map(async (session) => {
        try {
          await session.ensureConnected();
          await session.ensureTools();
        } catch {
          return;
        }
        if (closed || session.closed || signal.aborted) return;
        rebuildCatalog();
        await readPinned(session, signal);
      }),
    );
  }

  async function readPinned(session: ServerSession, signal: AbortSignal): Promise<void> {
    const uris = session.server.pinned_resources;
    if (uris.length === 0 || !session.connection) return;
    const server = access().find((s) => s.name === session.server.name)!;
    if (!session.capabilities.resources) {
      session.pinnedWarnings.push('pinned_resources ignored: the server does not support resources');
      return;
    }
    for (const uri of uris) {
      try {
        const content = await readResource(server, uri, AbortSignal.any([signal, AbortSignal.timeout(session.server.connect_timeout_secs * 1000)]), 'pinned-resource');
        const omitted = content.length - 1;
        const first = content[0] as { text: string };
        pinned.push({ server: session.server.name, uri, text: omitted > 0 ? `${first.text}\n[${omitted} binary item(s) omitted]` : first.text });
      } catch (error) {
        session.pinnedWarnings.push(capText(`pinned resource '${capText(uri, 200)}' could not be read: ${describe(error)}`, 300));
      }
    }
  }

  const runtime: McpRuntime = {
    agent,
    get warnings() {
      return [...selection.warnings, ...namingWarnings];
    },
    invoker,
    async tools(toolOptions) {
      if (closed) return {};
      await ensureCatalog(toolOptions?.signal);
      const imported = current.deferred_loading ? catalog.filter((entry) => activated.has(entry.exposed)) : catalog;
      const map: Record<string, McpTool> = Object.fromEntries(imported.map((entry) => [entry.exposed, toolFor(entry)]));
      for (const command of builtins) map[command.name] = builtinTool(command);
      if (current.deferred_loading) map[SEARCH_TOOL] = searchTool();
      return map;
    },
    get deferred() {
      return current.deferred_loading;
    },
    toolNames() {
      return catalog.map((entry) => entry.exposed);
    },
    pinnedResources() {
      return [...pinned];
    },
    async call(name, args, callOptions) {
      if (closed) return { content: [{ type: 'text', text: 'The MCP runtime is closed.' }], isError: true, attachments: [] };
      const entry = byName.get(name.toLowerCase());
      const timeoutMs = ((entry ? sessions.get(entry.server)?.server.tool_timeout_secs : undefined) ?? 600) * 1000 + CALL_GRACE_MS;
      const request: InvocationRequest = { command: name, args, transport: 'internal', timeoutMs, ...(agent === undefined ? {} : { caller: `agent:${agent}` }) };
      const signal = callOptions?.signal;
      // The pipeline caps its deadline at the largest timer delay.
      const onProgress = callOptions?.onProgress;
      directCalls.set(request, { signal, deadline: performance.now() + Math.min(timeoutMs, 2_147_483_647), progress: onProgress !== undefined });
      const outcome = await invoker.invoke(request, { ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) });
      return toModelResult(outcome.result, { scrub, ...(platform.store ? { store: platform.store } : {}) });
    },
    diagnostics() {
      return [...sessions.values()].map((session) => session.diagnostic());
    },
    async ready(readyOptions) {
      await (readyOptions?.signal ? raceAbort(startup, readyOptions.signal) : startup);
    },
    refresh: (refreshOptions) => refreshAll(refreshOptions?.signal),
    async reload(next, reloadOptions) {
      if (closed) throw new McpClientError('closed', 'The MCP runtime is closed.');
      const chosen = select(next);
      current = next;
      selection = chosen;
      const kept = new Map<string, ServerSession>();
      const fresh: ServerSession[] = [];
      for (const server of chosen.servers) {
        const old = sessions.get(server.name);
        if (old && !old.closed && sameEntry(old.server, server)) kept.set(server.name, old);
        else {
          const session = new ServerSession(server, host);
          kept.set(server.name, session);
          fresh.push(session);
        }
      }
      for (const [name, old] of sessions) {
        if (kept.get(name) === old) continue;
        host.track(old.close());
        for (let i = pinned.length - 1; i >= 0; i -= 1) if (pinned[i]!.server === name) pinned.splice(i, 1);
      }
      sessions.clear();
      for (const [name, session] of kept) sessions.set(name, session);
      catalogDirty = true;
      rebuildCatalog();
      const reloaded = start(fresh, reloadOptions?.signal ?? new AbortController().signal);
      startup = Promise.all([startup, reloaded]).then(() => {});
      await reloaded;
      rebuildCatalog();
    },
    close() {
      if (closing) return closing;
      closed = true;
      startupAbort.abort();
      if (refreshTimer) clearTimeout(refreshTimer);
      options.signal?.removeEventListener('abort', onAbort);
      removeHook();
      if (capability) registry.unregister(capability);
      capability = undefined;
      closing = (async () => {
        await Promise.allSettled([...sessions.values()].map((session) => session.close()));
        while (pending.size > 0) await Promise.allSettled([...pending]);
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return runtime.close();
    },
  };
  const onAbort = () => void runtime.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  startup = start([...sessions.values()], startupAbort.signal).then(() => {
    if (!closed) rebuildCatalog();
  });
  if (options.waitForServers === false) return runtime;
  try {
    await (options.signal ? raceAbort(startup, options.signal) : startup);
  } catch (error) {
    startupAbort.abort();
    await runtime.close();
    throw new McpClientError('aborted', 'MCP runtime startup was aborted.', { cause: error });
  }
  return runtime;
}

/** Stable JSON of a server entry, to tell whether a reload changed it. */
function sameEntry(a: McpServerConfig, b: McpServerConfig): boolean {
  const stable = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(stable) : isRecord(value) ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, stable(value[key])])) : value;
  return JSON.stringify(stable(a)) === JSON.stringify(stable(b));
}
