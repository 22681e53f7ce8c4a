// Shapes the dashboard reads from the host (see the host's HostStatus and the dashboard API contract).
// Everything optional that a host may leave out is optional here, so the pages never assume it.

/** The host's own shape (a leaf file of the host, imported type-only: nothing of it is bundled). */
export type { PendingView } from '../../src/dashboard/pendingView.js';

export interface ServerDiagnosticView {
  readonly server: string;
  readonly transport: string;
  readonly state: string;
  readonly toolCount: number;
  readonly error?: string;
  readonly errorCode?: string;
  readonly listError?: string;
  readonly pausedUntil?: string;
  readonly warnings?: readonly string[];
}

export interface NodeView {
  readonly enabled: boolean;
  readonly state: string;
  readonly url?: string;
  readonly nodeId?: string;
  readonly lastError?: { readonly code: string; readonly message: string };
  readonly nextRetryAt?: string;
  readonly connectedAt?: string;
  readonly serverVersion?: string;
  readonly pairing?: { readonly state: string; readonly requestId?: string; readonly commands?: readonly string[] };
  readonly detail?: string;
}

export interface StatusView {
  readonly version: string;
  readonly home?: string;
  readonly settingsPath?: string;
  readonly uptimeSeconds?: number;
  readonly mcp: { readonly state: string; readonly url?: string; readonly error?: string; readonly tokenPath?: string; readonly inFlight?: number };
  readonly stdio: { readonly state: string; readonly adminUrl?: string };
  readonly node: NodeView;
  readonly channel: { readonly enabled: boolean };
  readonly capabilities?: { readonly commands: number; readonly categories: readonly string[] };
  readonly execApprovals?: { readonly mode: string; readonly allowlist: number; readonly pending: number };
  readonly mcpClient?: {
    readonly reexport: boolean;
    readonly state: string;
    readonly servers: readonly ServerDiagnosticView[];
    readonly toolCount: number;
    readonly warnings?: readonly string[];
    readonly error?: string;
  };
  readonly dashboard?: { readonly url?: string };
  readonly pendingApprovals?: number;
}

export interface ClientView {
  readonly id: string;
  readonly name: string;
  /** The config to merge: JSON text, or the object itself. */
  readonly snippet: string | Readonly<Record<string, unknown>>;
  /** Lines for people: where the snippet goes. */
  readonly instructions?: readonly string[];
  /** A command that configures the client instead (argv), e.g. `claude mcp add …`. */
  readonly command?: readonly string[];
  readonly configPath?: string;
  readonly configured: boolean;
}

export interface AuditRecordView {
  readonly time: string;
  readonly command: string;
  readonly transport: string;
  readonly caller?: string;
  readonly outcome: string;
  readonly durationMs: number;
  readonly argsSha256?: string;
}

export interface ToolView {
  readonly name: string;
  readonly description?: string;
  readonly enabled?: boolean;
  /** `auto` (auto-approve), `ask` (always ask) or `default` (the risk profile decides). */
  readonly approval?: string;
}

/** A configured server as `GET /api/servers` lists it: its settings entry (secrets masked) and live diagnostic. */
export interface ServerItem {
  readonly name: string;
  readonly enabled?: boolean;
  readonly config: {
    readonly name: string;
    readonly transport?: string;
    readonly command?: string;
    readonly args?: readonly string[];
    readonly url?: string;
    readonly enabled?: boolean;
    /** Values come back masked: env and header values are write-only. */
    readonly env?: Readonly<Record<string, string>>;
    readonly headers?: Readonly<Record<string, string>>;
  };
  readonly status?: ServerDiagnosticView;
}

/** The risk profile's per-tool lists that govern imported tools (full `<server>__<tool>` names). */
export interface ToolPolicy {
  readonly profile: string;
  readonly excludedTools: readonly string[];
  readonly autoApprove: readonly string[];
  readonly alwaysAsk: readonly string[];
}

export interface ServersView {
  readonly toolPolicy?: ToolPolicy;
  readonly reexport?: boolean;
  readonly state?: string;
  readonly servers: readonly ServerItem[];
  readonly restartNeeded?: readonly string[];
}

/** A client config file found on this machine, as `GET /api/servers/discovered` lists it (no secrets). */
export interface DiscoveredConfig {
  readonly path: string;
  readonly client?: string;
  readonly servers: readonly { readonly name: string; readonly transport?: string; readonly configured?: boolean }[];
  readonly issues?: readonly string[];
  readonly error?: string;
}

export interface GatewayView {
  readonly node?: NodeView;
  readonly configured?: { readonly enabled: boolean; readonly url?: string; readonly hasToken?: boolean };
  readonly restartNeeded?: readonly string[];
}
