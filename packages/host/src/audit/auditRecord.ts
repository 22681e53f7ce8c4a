// A leaf file (no imports) so the dashboard UI reads the same record shape, type-only.

/**
 * One line of `audit.log`: a tool call, or a change made from the dashboard or the admin API (a
 * control record: `command` in the reserved `capnode.` namespace, `transport` `dashboard` or
 * `admin`). Argument and setting values are never written (they can hold secrets); only a hash or paths.
 */
export interface AuditRecord {
  /** ISO 8601 time the call finished. */
  readonly time: string;
  /** Canonical command name, or the name as sent when it was unknown (scrubbed, at most 200 characters). */
  readonly command: string;
  readonly transport: string;
  /** The caller as it named itself (scrubbed, at most 200 characters). */
  readonly caller?: string;
  /** The client as the transport verified it: the name of the MCP token the call came with. */
  readonly client?: string;
  readonly requestId?: string;
  /** Hex SHA-256 of the canonical JSON of the arguments as sent. */
  readonly argsSha256?: string;
  /** `ok`, or the failure code (`denied`, `timeout`, `invalid_arguments`, ...). */
  readonly outcome: string;
  readonly durationMs: number;
  /**
   * Control records of settings changes: the setting paths changed (`execApprovals.allowlist`,
   * `mcpClient.servers`), or for a refused change the paths it was refused for. Never values; at
   * most 32 paths (the last then reads `+N more`), each scrubbed and at most 200 characters.
   */
  readonly changed?: readonly string[];
}
