// The host status contract: what `host.status()`, `app.status`, `capnode status --json` and the
// dashboard report. A leaf file (type-only imports, nothing at runtime) so the dashboard UI
// type-checks against these very shapes without bundling anything of the host.
import type { GatewayConnectionState, InvokeLedgerStats, GatewayNodePairingState } from '@capnode/gateway-bridge';
import type { ServerDiagnostic } from '@capnode/mcp-client';

export type McpListenerState = 'disabled' | 'stopped' | 'starting' | 'listening' | 'error';

/** The host's real state, as `app.status` and `capnode status` report it. */
export interface HostStatus {
  readonly version: string;
  readonly pid: number;
  readonly startedAt: string;
  readonly uptimeSeconds: number;
  readonly home: string;
  readonly settingsPath: string;
  readonly mcp: {
    readonly state: McpListenerState;
    /** The endpoint while listening. */
    readonly url?: string;
    /** Why the listener is not running, after a failed start. */
    readonly error?: string;
    readonly tokenPath: string;
    readonly inFlight?: number;
  };
  readonly stdio: {
    readonly state: 'stopped' | 'serving';
    /** Where `capnode approvals` reaches this stdio host (admin routes only, no MCP). */
    readonly adminUrl?: string;
  };
  readonly capabilities: { readonly commands: number; readonly categories: readonly string[] };
  readonly execApprovals: { readonly mode: string; readonly allowlist: number; readonly pending: number };
  /** Gateway node mode: the node connection's own state (`connected` only after the gateway's hello). */
  readonly node: GatewayNodeModeStatus;
  /** The gateway channel tools (`channel.enabled`), served by the local MCP server. */
  readonly channel: { readonly enabled: boolean };
  /** OpenAgent's client capabilities channel (`openagent` in settings.json; `capnode openagent status`). */
  readonly openagent: OpenAgentStatus;
  /** Where `capnode approvals` and `capnode gateway status` reach a host running without the MCP listener (node mode only). */
  readonly admin?: { readonly url: string };
  /** Tools imported from other MCP servers (`mcpClient` in settings.json) and each server's diagnostic. */
  readonly mcpClient: ImportedToolsStatus;
  /** The audit log: records written, dropped (stalled or full disk), waiting, rotations. */
  readonly audit: AuditStats & { readonly path: string };
  /** The web dashboard's own loopback listener (`dashboard` in settings.json; `capnode ui` opens it). */
  readonly dashboard: DashboardStatus;
  /** Every plugin (the pack, settings.json `plugins`, dev plugins): loaded or failed with its diagnostic, and its unavailable commands. */
  readonly plugins: readonly PluginStatus[];
}

/** OpenAgent's names for the channel's state: off, opening, registered idle, registered with calls running, not reachable. */
export type OpenAgentPhase = 'disabled' | 'connecting' | 'connected' | 'active' | 'unavailable';

/** What `status().openagent` reports (never the handshake headers). */
export interface OpenAgentStatus {
  /** The device-level consent switch (`openagent.enabled`). */
  readonly enabled: boolean;
  readonly phase: OpenAgentPhase;
  readonly connected: boolean;
  readonly url?: string;
  readonly deviceId?: string;
  readonly accountId?: string;
  /** Random per host start; the server keys this host by it. */
  readonly clientInstanceId: string;
  /** ≥ 1; kept across reconnects, bumped each time the channel is started again in this host. */
  readonly generation: number;
  readonly activeCalls: number;
  readonly connectedAt?: string;
  readonly nextRetryAt?: string;
  /** Why the channel is not connected (a rejected registration's reason, a close, missing settings). */
  readonly lastError?: string;
  readonly closeCode?: number;
  /** The offered catalog: servers, tools, tools left out for the quotas. */
  readonly catalog: { readonly servers: number; readonly tools: number; readonly dropped: number };
  /** One line for people. */
  readonly detail: string;
}

/** What `status().node` reports: the node connection's real state, never the MCP listener's. */
export type GatewayNodeModeState = 'disabled' | 'stopped' | GatewayConnectionState;

export interface GatewayNodeModeStatus {
  readonly enabled: boolean;
  readonly state: GatewayNodeModeState;
  /** The gateway URL (never the token). */
  readonly url?: string;
  /** This machine's node id (device id) once the node was created. */
  readonly nodeId?: string;
  readonly identityPath: string;
  /** Why the last connect attempt or connection ended. */
  readonly lastError?: { readonly code: string; readonly message: string };
  /** When the next connect attempt runs while `waiting` (ISO time). */
  readonly nextRetryAt?: string;
  readonly connectedAt?: string;
  readonly serverVersion?: string;
  readonly pairing?: { readonly state: GatewayNodePairingState; readonly requestId?: string; readonly commands?: readonly string[] };
  readonly declaredCommands?: number;
  readonly invocations?: InvokeLedgerStats;
  /** One line for people. */
  readonly detail: string;
}

/** Where the host's imported MCP tools stand. */
export type ImportedToolsState = 'off' | 'starting' | 'ready' | 'failed' | 'closed';

/** The `mcpClient` part of the host status: re-export on or off, and every server's diagnostic. */
export interface ImportedToolsStatus {
  /** `mcpClient.reexport` as the host started with it. */
  readonly reexport: boolean;
  /** `off` (re-export not enabled), `starting` (servers still connecting), `ready`, `failed` (the runtime could not start), `closed`. */
  readonly state: ImportedToolsState;
  /** The agent whose risk profile governs the re-exported tools. */
  readonly agent: string;
  /** Per server: state (`connecting` until it connected or failed), transport, connect time, tool count, last error. */
  readonly servers: readonly ServerDiagnostic[];
  /** Imported tools now in the registry. */
  readonly toolCount: number;
  /** Configuration, grant and naming warnings. */
  readonly warnings: readonly string[];
  /** Why the runtime could not start (state `failed`). */
  readonly error?: string;
}

export interface AuditStats {
  /** Records on disk. */
  readonly written: number;
  /** Records lost: the queue was full (stalled disk), a write failed (disk full), or close timed out. */
  readonly dropped: number;
  /** Bytes waiting for the disk. */
  readonly queuedBytes: number;
  readonly rotations: number;
}

/** One plugin as `status().plugins` and `capnode status` report it. */
export interface PluginStatus {
  readonly name: string;
  /** What was configured: the absolute path, the package name, or `builtin:<name>`. */
  readonly source: string;
  readonly kind: 'builtin' | 'file' | 'package' | 'dev';
  readonly state: 'loading' | 'loaded' | 'failed';
  /** The commands it registered (unavailable ones included). */
  readonly commands: readonly string[];
  /** Its commands whose backend is missing here: listed locally, failing with `unavailable`, never declared to a gateway. */
  readonly unavailable: readonly UnavailableCommand[];
  /** Why it did not load (failed), or why its last dev reload failed. */
  readonly error?: string;
}

export interface UnavailableCommand {
  readonly command: string;
  readonly install: string;
}

export type DashboardState = 'disabled' | 'stopped' | 'starting' | 'listening' | 'error';

/** The dashboard part of the host status. */
export interface DashboardStatus {
  readonly state: DashboardState;
  /** `http://127.0.0.1:<port>/` while listening. */
  readonly url?: string;
  /** Why it is not listening, after a failed start. */
  readonly error?: string;
}
