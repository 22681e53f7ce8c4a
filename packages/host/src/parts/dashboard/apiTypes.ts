// The dashboard API's response shapes, where they differ from the host's own types (masked,
// trimmed or combined). A leaf file (type-only imports, nothing at runtime): the routes build these
// and the dashboard UI reads them type-only, so a change on either side breaks the other's type-check.
import type { ServerDiagnostic } from '@capnode/mcp-client';
import type { GatewayNodeEntry } from '@capnode/protocol/gateway';
import type { AuditRecord } from '../../audit/auditRecord.js';
import type { ClientTarget } from '../../setup/clientTarget.js';
import type { HostStatus, ImportedToolsState, GatewayNodeModeStatus } from '../../status/hostStatus.js';

/** `GET /api/status` and the `status` event: the host status and the number of pending approvals. */
export type DashboardStatusView = HostStatus & { readonly pendingApprovals: number };

/** `GET /api/session`. */
export interface SessionView {
  readonly csrfToken: string;
  readonly version: string;
  /** True when no `settings.json` existed before this host started. */
  readonly firstRun: boolean;
}

/** `GET /api/activity`: audit records newest first, and the cursor of the next page when there is one. */
export interface ActivityView {
  readonly records: readonly AuditRecord[];
  readonly nextCursor?: string;
}

/** One client of `GET /api/clients`: its target, the instructions as one paragraph, and the command that configures it instead. */
export interface ClientView extends ClientTarget {
  readonly instructions: readonly string[];
  /** A command that configures the client instead (argv), e.g. `claude mcp add …`. */
  readonly command?: readonly string[];
  /**
   * How the MCP token is spelled in `snippet` and `command` (masked, as the Token page shows it); Copy
   * puts the revealed token in its place. Absent when they hold no token.
   */
  readonly tokenMask?: string;
}

/** `GET /api/clients`. */
export interface ClientsView {
  readonly clients: readonly ClientView[];
}

/** `POST /api/clients/:id/preview`: what the write would change (the `after` text stays on the host: its token is not masked). */
export interface ClientPreviewView {
  readonly path: string;
  /** Unified diff, secrets masked. */
  readonly diff: string;
  /** The file as previewed; sent back as `expected` with the write so a change made meanwhile is not overwritten. */
  readonly before: string;
  /** The file does not exist yet. */
  readonly created: boolean;
  /** False when the file already holds exactly this entry. */
  readonly changed: boolean;
}

/** `POST /api/clients/:id/write`: the file written and the backup of its previous content. */
export interface ClientWriteView {
  readonly path: string;
  readonly changed: boolean;
  readonly backup?: string;
}

/** A configured MCP server's settings entry as the dashboard lists it: env and header values come back masked (write-only). */
export interface ServerEntryView {
  readonly name: string;
  readonly transport?: string;
  readonly command?: string;
  readonly args?: readonly string[];
  readonly url?: string;
  readonly enabled?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One server of `GET /api/servers`: its entry (secrets masked) and its live diagnostic when the host connected it. */
export interface ServerItem {
  readonly name: string;
  readonly enabled: boolean;
  readonly config: ServerEntryView;
  readonly status?: ServerDiagnostic;
}

/** The risk profile's per-tool lists that govern imported tools (full `<server>__<tool>` names). */
export interface ToolPolicy {
  readonly profile: string;
  readonly excludedTools: readonly string[];
  readonly autoApprove: readonly string[];
  readonly alwaysAsk: readonly string[];
}

/** `GET /api/servers`. */
export interface ServersView {
  readonly reexport: boolean;
  readonly state: ImportedToolsState;
  readonly servers: readonly ServerItem[];
  readonly toolPolicy: ToolPolicy;
  /** `mcpClient…` setting paths that take effect at the next start. */
  readonly restartNeeded: readonly string[];
}

/** `POST /api/servers/:name/test`: the server's diagnostic after one connect and its tool names. */
export interface ServerTestResult {
  readonly ok: boolean;
  readonly diagnostic?: ServerDiagnostic;
  readonly tools: readonly { readonly name: string; readonly description?: string }[];
}

/** A client config file found on this machine (`GET /api/servers/discovered`): each server by name and kind, no secrets. */
export interface DiscoveredConfig {
  readonly client: string;
  readonly path: string;
  readonly servers: readonly { readonly name: string; readonly transport: string; readonly configured: boolean }[];
  readonly issues?: readonly string[];
  readonly error?: string;
}

/** `GET /api/servers/discovered`. */
export interface DiscoveredView {
  readonly files: readonly DiscoveredConfig[];
}

/** `POST /api/servers/import`: the servers added, and those skipped because a server of that name is configured. */
export interface ServerImportResult {
  readonly imported: readonly string[];
  readonly skipped: readonly string[];
  readonly restartNeeded: readonly string[];
}

/** `GET /api/gateway`: the gateway node's state and what settings.json configures (the token only as `hasToken`). */
export interface GatewayView {
  readonly node: GatewayNodeModeStatus;
  readonly configured: { readonly enabled: boolean; readonly url?: string; readonly hasToken: boolean };
  /** `node.…` setting paths that take effect at the next start. */
  readonly restartNeeded: readonly string[];
}

/** `PUT /api/gateway`: what the running host applied and what waits for a restart. */
export interface GatewaySaveResult {
  readonly ok: true;
  readonly applied: readonly string[];
  readonly restartNeeded: readonly string[];
}

/** `POST /api/gateway/pair`: the pairing requests approved and the gateway's entry for this node (null when it has none). */
export interface GatewayPairResult {
  readonly nodeId: string;
  readonly approved: readonly { readonly requestId: string; readonly commands: readonly string[] }[];
  readonly node: GatewayNodeEntry | null;
}

/** `GET /api/token`: the MCP token masked (last 4 characters), its file, and whether it exists yet. */
export interface TokenView {
  readonly masked: string;
  readonly path: string;
  readonly exists: boolean;
}

/** `POST /api/exec/test`: the verdict the exec approval hook would reach now, and why. */
export interface ExecTestResult {
  readonly decision: 'allow' | 'ask' | 'deny';
  readonly reason: string;
  readonly resolvedPath?: string;
}
