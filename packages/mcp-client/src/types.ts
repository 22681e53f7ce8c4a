import type { SelfHostIdentity } from './selfHost.js';
import type { InputJsonSchema, InvocationHook, Invoker, ProgressUpdate } from '@capnode/capabilities';
import type { Client, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Implementation, Root } from '@modelcontextprotocol/client';
import type { McpConfig, McpServerConfig, McpTransportKind } from './config.js';
import type { McpClientErrorCode } from './errors.js';
import type { Approver } from './policy.js';
import type { McpToolsSlot } from './mcpToolsSlot.js';
import type { BinaryStore, ModelToolResult } from './results.js';

// Contract types of the runtime: a leaf module, so the pool, catalog, connector and both faces can
// share them without import cycles. `runtime.ts` re-exports them.

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

/** Per-server state as a host or CLI shows it. `idle`: disconnected after `idle_timeout_secs` without calls; the next call reconnects. */
export type ServerState = 'connecting' | 'connected' | 'failed' | 'disconnected' | 'paused' | 'idle' | 'closed';

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
  /** The code of the last connect failure when it has one (e.g. `auth_required`: run `capnode servers login <name>`). */
  readonly errorCode?: McpClientErrorCode;
  /** Non-fatal: skipped tools, partial listings. */
  readonly warnings: readonly string[];
  /**
   * Set while the server's `tools/list` fails or hangs: the catalog keeps the server's last good
   * list (none if it never listed) and the listing is retried in the background with backoff.
   */
  readonly listError?: string;
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
  /** False when its server takes one call at a time (`parallel_calls = false`): do not call such tools in parallel. */
  readonly parallelCalls: boolean;
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
   * and binds its policy into the pipeline's {@link McpToolsSlot}, which the invoker must have been
   * composed with (`createMcpToolsSlot()`; else `invalid_config`): the hook order stays as composed.
   * Default: a private registry and invoker (the slot first, then `hooks`).
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
   * The id of the capnode host this runtime runs in (what its MCP server declares as
   * {@link HOST_MARKER_CAPABILITY}; capnode's host uses its config directory's stable id): a server
   * that declares the same id is that host itself and is refused at connect with `self_host`, never retried.
   */
  readonly hostInstance?: string;
  /**
   * How to recognise the host this runtime runs in from a server's entry alone (its MCP URL, or a
   * `capnode mcp` command for the same config directory): such a server is refused with
   * `self_host` before anything is started or connected.
   */
  readonly hostIdentity?: SelfHostIdentity;
  /**
   * Imported tools kept per server and in all (defaults 512 and 2048): a server listing more keeps its
   * first ones, and the overflow is reported as a warning, so no catalog grows without bound.
   */
  readonly maxTools?: { readonly perServer?: number; readonly total?: number };
  /**
   * Whether `createMcpRuntime` waits until every server has connected or failed (default `true`).
   * With `false` it resolves at once and each server's tools appear as that server becomes ready;
   * `runtime.ready()` tells when startup is over. Either way, tools registered into `invoker`'s
   * registry are published per server as soon as that server is ready.
   */
  readonly waitForServers?: boolean;
  /**
   * Answers servers' `sampling/createMessage` requests (the harness runs its model). Given, the client
   * declares the `sampling` capability; without it none is declared and such requests are refused
   * with JSON-RPC error -32601.
   */
  readonly onSampling?: SamplingHandler;
  /**
   * Answers servers' `elicitation/create` requests (form mode) that no caller's client takes (see
   * {@link McpRuntimeOptions.forwardElicitation}). Given, the client declares `elicitation`.
   */
  readonly onElicitation?: ElicitationHandler;
  /**
   * Declares `elicitation` so that a server's question during an imported tool's call goes to the
   * client of that call (the invocation's `elicit`, set by a host for clients that can elicit). A
   * question no call can take goes to `onElicitation`, else is refused with JSON-RPC error -32603.
   */
  readonly forwardElicitation?: boolean;
  /**
   * The roots servers get for `roots/list`: a list, or a function asked on every request. Given, the
   * client declares `roots` (with `listChanged`; see {@link McpRuntime.rootsChanged}); without it
   * `roots/list` is refused with JSON-RPC error -32601.
   */
  readonly roots?: readonly Root[] | ((context: ServerRequestContext) => readonly Root[] | Promise<readonly Root[]>);
}

/** Which server sent a server-initiated request, and the request's own cancellation. */
export interface ServerRequestContext {
  readonly server: string;
  /** Aborted when the server cancels the request, the connection ends or the runtime closes. */
  readonly signal: AbortSignal;
}

/** Answers one `sampling/createMessage` request (the result is validated before it is sent). */
export type SamplingHandler = (params: CreateMessageRequestParams, context: ServerRequestContext) => CreateMessageResult | Promise<CreateMessageResult>;

/** Answers one `elicitation/create` request (the result is validated before it is sent). */
export type ElicitationHandler = (params: ElicitRequestParams, context: ServerRequestContext) => ElicitResult | Promise<ElicitResult>;

/** One event of {@link McpRuntime.subscribe} / {@link McpRuntime.events}. */
export type McpRuntimeEvent = ServerStateEvent | CatalogChangedEvent | ListChangedEvent | DiagnosticEvent;

/** A server's state changed (`idle` after `idle_timeout_secs` without calls; the next call reconnects). */
export interface ServerStateEvent {
  readonly type: 'server-state';
  readonly server: string;
  readonly state: ServerState;
  readonly previous: ServerState;
  /** The failure that caused `failed` / `disconnected`, scrubbed and capped. */
  readonly error?: string;
  /** The code of that failure when it has one (e.g. `auth_required`), as in {@link ServerDiagnostic.errorCode}. */
  readonly errorCode?: McpClientErrorCode;
}

/** The agent's imported tools of one server changed (exposed names). */
export interface CatalogChangedEvent {
  readonly type: 'catalog-changed';
  readonly server: string;
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

/** A server said its resources or prompts changed; the cached lists of that server were dropped. */
export interface ListChangedEvent {
  readonly type: 'list-changed';
  readonly server: string;
  readonly list: 'resources' | 'prompts';
}

/** A non-fatal problem of one server (skipped tools, failed listings, pinned resources). */
export interface DiagnosticEvent {
  readonly type: 'diagnostic';
  readonly server: string;
  readonly level: 'warning' | 'error';
  readonly message: string;
}

/**
 * Asks the user through the client of the call under way (a host sets it per invocation as
 * `elicit` for clients that declared elicitation); structurally the capabilities pipeline's Elicitor.
 */
export type CallElicitor = (
  request: {
    readonly message: string;
    readonly requestedSchema: { readonly type: 'object'; readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>; readonly required?: readonly string[] };
  },
  options: { readonly signal: AbortSignal },
) => Promise<{ readonly action: 'accept' | 'decline' | 'cancel'; readonly content?: Readonly<Record<string, unknown>> }>;

/** A listener of runtime events; it runs synchronously and its errors are logged, never thrown. */
export type McpRuntimeListener = (event: McpRuntimeEvent) => void;

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
  /**
   * Calls `listener` for every later event (server state, catalog changes, resource/prompt list
   * changes, diagnostics); returns the unsubscribe function.
   */
  subscribe(listener: McpRuntimeListener): () => void;
  /**
   * The same events as an async iterator, from now on until `signal` aborts, the loop breaks, or
   * the runtime closes. Up to 1,000 unread events are buffered; older ones are dropped beyond that.
   */
  events(options?: { readonly signal?: AbortSignal }): AsyncIterableIterator<McpRuntimeEvent>;
  /** Tells connected servers that declared interest that `roots` changed (`notifications/roots/list_changed`). */
  rootsChanged(): Promise<void>;
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

