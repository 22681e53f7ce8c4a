// Shapes the dashboard reads from the host: the host's own types and the dashboard API's response
// types, imported type-only from leaf files of the host (nothing of the host is bundled). A change of
// a host shape breaks this UI's type-check instead of drifting from it.
import type { HostStatus } from '../../src/status/hostStatus.js';

export type { AllowedView, ApprovalsView, PendingView } from '../../src/parts/dashboard/pendingView.js';
export type { AuditRecord as AuditRecordView } from '../../src/audit/auditRecord.js';
export type { GatewayNodeModeStatus as NodeView } from '../../src/status/hostStatus.js';
export type {
  ActivityView,
  ClientPreviewView,
  ClientsView,
  ClientView,
  ClientWriteView,
  DashboardStatusView as StatusView,
  DiscoveredConfig,
  DiscoveredView,
  ExecTestResult,
  GatewayPairResult,
  GatewaySaveResult,
  GatewayView,
  ServerImportResult,
  ServerItem,
  ServersView,
  ServerTestResult,
  SessionView,
  TokenView,
  ToolPolicy,
} from '../../src/parts/dashboard/apiTypes.js';

/** One imported server's live diagnostic, as the host status lists it. */
export type ServerDiagnosticView = HostStatus['mcpClient']['servers'][number];

/** One imported tool as the servers page shows it: its policy choices, worked out from {@link ToolPolicy}. */
export interface ToolView {
  readonly name: string;
  readonly description?: string;
  readonly enabled?: boolean;
  /** `auto` (auto-approve), `ask` (always ask) or `default` (the risk profile decides). */
  readonly approval?: string;
}
