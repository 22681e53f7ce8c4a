// The clients capnode configures and how the dashboard lists one. A leaf file (no imports) so the
// dashboard UI reads the same shape, type-only.

/** The MCP clients capnode writes configs for (the ids `capnode config <client>` takes). */
export const CLIENT_IDS = ['claude', 'claude-desktop', 'cursor', 'vscode'] as const;
export type ClientId = (typeof CLIENT_IDS)[number];

/** One client as the dashboard and `capnode doctor` list it. */
export interface ClientTarget {
  readonly id: ClientId;
  readonly name: string;
  /** The file `writeClientConfig` writes on this platform. */
  readonly configPath: string;
  /** An entry in one of the client's config files on this machine points at this host. */
  readonly configured: boolean;
  readonly snippet: Record<string, unknown>;
}
