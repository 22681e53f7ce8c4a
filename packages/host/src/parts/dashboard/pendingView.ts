/**
 * A pending approval as the dashboard shows it: the summary is the CLI's, line for line, escaped.
 * A leaf file (no imports) so the dashboard UI reads the same shape, type-only.
 */
export interface PendingView {
  readonly id: string;
  readonly command: string;
  /** `formatApprovalSummary` lines joined with `\n`; every caller-supplied character is escaped. */
  readonly summary: string;
  /** The full argument hash to send back with the answer (empty when the request has none). */
  readonly argsHash: string;
  readonly transport?: string;
  /** The name of the MCP token the call came with (the client as verified; `caller` is self-reported). */
  readonly client?: string;
  readonly caller?: string;
  /** ISO 8601. */
  readonly requestedAt: string;
  readonly expiresAt: string;
}

/** A request allowed for the agent's retry, shown until the retry runs it or `retryUntil` passes. */
export interface AllowedView {
  readonly id: string;
  readonly command: string;
  readonly summary: string;
  readonly transport?: string;
  /** The name of the MCP token the call came with (the client as verified; `caller` is self-reported). */
  readonly client?: string;
  readonly caller?: string;
  readonly decision: 'allow-once' | 'allow-always';
  /** ISO 8601: an identical retry runs until then. */
  readonly retryUntil: string;
}

/** `GET /api/approvals` and the `approvals` event. */
export interface ApprovalsView {
  readonly pending: readonly PendingView[];
  readonly allowed: readonly AllowedView[];
}
