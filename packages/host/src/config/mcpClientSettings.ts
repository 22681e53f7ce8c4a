import { z } from 'zod';
import { parseMcpConfig, resolveAgentGrant, validateMcpConfig, type ConfigIssue, type McpConfig, type McpServerConfig } from '@capnode/mcp-client';
import { HostError } from '../errors.js';
import type { Settings, SettingsStore } from './settings.js';

/** The agent name the host's re-exported tools run as, unless `mcpClient.agent` says otherwise. */
export const DEFAULT_MCP_CLIENT_AGENT = 'capnode';

/**
 * The `mcpClient` section of `settings.json`: the MCP client configuration of `@capnode/mcp-client`
 * (`servers`, `bundles`, `agents`, `risk_profiles`, `enabled`, `deferred_loading`, validated by that
 * package, so every problem is named with its path, e.g. `mcpClient.servers[0].env.NODE_OPTIONS`)
 * plus two host keys:
 *
 * - `reexport` (default `false`): the host connects the servers when it starts and serves their tools
 *   as `<server>__<tool>` through its own MCP endpoint, with the same approval and audit pipeline.
 * - `agent` (default `capnode`): whose risk profile governs those calls. When `agents.<agent>` is
 *   configured its bundles decide which servers the host connects; otherwise every enabled server is.
 *
 * The section is stored as written (defaults are not filled into the file).
 */
export const mcpClientSettingsSchema = z
  .looseObject({
    reexport: z.boolean().optional(),
    agent: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters').optional(),
  })
  .superRefine((value, ctx) => {
    // `${VAR}` references are expanded when the servers are resolved (an unset variable then fails
    // the MCP client with its path), not here: a stored file stays loadable in any environment.
    const result = validateMcpConfig(mcpConfigPart(value), { env: false });
    for (const issue of result.ok ? [] : result.issues) {
      ctx.addIssue({ code: 'custom', path: issue.path === '(root)' ? [] : [issue.path], message: issue.message });
    }
  });

/** The `mcpClient` section as stored (as written; defaults apply in {@link resolveMcpClientSettings}). */
export type McpClientSettings = z.output<typeof mcpClientSettingsSchema>;

/** One server entry as written in `settings.json` (snake_case keys of `@capnode/mcp-client`). */
export type McpServerEntry = Readonly<Record<string, unknown>> & { readonly name: string };

/** How the host and the CLI run the MCP client for these settings. */
export interface McpClientSetup {
  readonly reexport: boolean;
  readonly agent: string;
  /** True when `agents.<agent>` is not configured: every enabled server is connected. */
  readonly allServers: boolean;
  readonly config: McpConfig;
  /** The servers that will be connected (enabled, and granted when grants apply). */
  readonly servers: readonly McpServerConfig[];
  readonly warnings: readonly ConfigIssue[];
}

function mcpConfigPart(section: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { reexport: _reexport, agent: _agent, ...config } = section;
  return config;
}

/**
 * The MCP client configuration of `settings`: the validated `McpConfig`, whether the host
 * re-exports it, the agent whose risk profile applies, and the servers that will be connected.
 *
 * @example
 * const setup = resolveMcpClientSettings(loadSettings(paths.settings));
 * await using runtime = await createMcpRuntime(setup.config, { agent: setup.agent, allServers: setup.allServers });
 */
export function resolveMcpClientSettings(settings: Settings): McpClientSetup {
  const section = settings.mcpClient ?? {};
  const { config, warnings } = parseMcpConfig(mcpConfigPart(section));
  const agent = section.agent ?? DEFAULT_MCP_CLIENT_AGENT;
  const allServers = !Object.hasOwn(config.agents, agent);
  const servers = allServers ? (config.enabled ? config.servers.filter((server) => server.enabled) : []) : resolveAgentGrant(config, agent).servers;
  return { reexport: section.reexport ?? false, agent, allServers, config, servers, warnings };
}

/** The server entries as written in `settings.json` (empty when none are configured). */
export function mcpServerEntries(settings: Settings): readonly McpServerEntry[] {
  const servers = settings.mcpClient?.servers;
  return Array.isArray(servers) ? (servers as McpServerEntry[]) : [];
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function withServers(settings: Settings, servers: readonly McpServerEntry[]): Settings {
  return { ...settings, mcpClient: { ...settings.mcpClient, servers: [...servers] } };
}

/**
 * Adds server entries to `settings.json` through `store` (validated as a whole, written atomically;
 * an invalid entry leaves the file untouched and the error names its path). A name that is already
 * configured (case-insensitively) is refused unless `replace` is set.
 * @throws HostError `invalid_settings` (bad entry or duplicate name), `io`.
 */
export async function addMcpServers(store: SettingsStore, entries: readonly McpServerEntry[], options: { readonly replace?: boolean } = {}): Promise<Settings> {
  return store.update((settings) => {
    const servers = [...mcpServerEntries(settings)];
    for (const entry of entries) {
      const index = servers.findIndex((server) => typeof server.name === 'string' && sameName(server.name, entry.name));
      if (index === -1) servers.push(entry);
      else if (options.replace) servers[index] = entry;
      else throw new HostError('invalid_settings', `an MCP server named '${servers[index]!.name}' is already configured in ${store.path}; remove it first (capnode servers remove ${servers[index]!.name})`);
    }
    return withServers(settings, servers);
  });
}

/**
 * Removes the server entry named `name` (case-insensitively) from `settings.json` through `store`.
 * Bundles that still name it only produce a warning afterwards (they grant nothing).
 * @returns the removed entry, or `undefined` when no server has that name (nothing is written then).
 */
export async function removeMcpServer(store: SettingsStore, name: string): Promise<McpServerEntry | undefined> {
  let removed: McpServerEntry | undefined;
  if (!mcpServerEntries(store.reload()).some((server) => sameName(server.name, name))) return undefined;
  await store.update((settings) => {
    const servers = mcpServerEntries(settings);
    removed = servers.find((server) => sameName(server.name, name));
    return withServers(
      settings,
      servers.filter((server) => server !== removed),
    );
  });
  return removed;
}

/**
 * Turns `mcpClient.reexport` on or off in `settings.json` through `store`. Applies at the next
 * host start.
 */
export async function setMcpReexport(store: SettingsStore, reexport: boolean): Promise<Settings> {
  return store.update((settings) => ({ ...settings, mcpClient: { ...settings.mcpClient, reexport } }));
}
