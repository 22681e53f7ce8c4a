import { normalizeRiskProfile, type McpConfig, type McpServerConfig, type RiskProfile } from './config.js';

/** Which servers an agent may connect to, and why others were left out. */
export interface AgentGrant {
  readonly agent: string;
  /** Granted and enabled servers, in config order. */
  readonly servers: readonly McpServerConfig[];
  /** Granted but `enabled = false`. */
  readonly disabled: readonly string[];
  /** The agent's risk profile (defaults when none is configured). */
  readonly profile: RiskProfile;
  /** Non-fatal: unknown agent, bundle or server names (each grants nothing). */
  readonly warnings: readonly string[];
}

/**
 * Resolves an agent's server grant, secure by default: an agent connects only to servers named by
 * its `mcpBundles` (file key `mcp_bundles`); the grant is the union of those bundles minus every name any of them excludes
 * (deny wins). Unknown agents, bundles and server names grant nothing and come back as warnings.
 * With `mcp.enabled = false` nothing is granted.
 */
export function resolveAgentGrant(config: McpConfig, agent: string): AgentGrant {
  const warnings: string[] = [];
  const agentConfig = Object.hasOwn(config.agents, agent) ? config.agents[agent] : undefined;
  const profileName = agentConfig?.riskProfile ?? agent;
  const profile = Object.hasOwn(config.riskProfiles, profileName) ? config.riskProfiles[profileName]! : normalizeRiskProfile();
  if (!agentConfig) warnings.push(`agent '${agent}' is not configured; it gets no MCP servers`);

  const byName = new Map(config.servers.map((server) => [server.name.toLowerCase(), server]));
  const granted = new Set<string>();
  const denied = new Set<string>();
  for (const alias of agentConfig?.mcpBundles ?? []) {
    const bundle = Object.hasOwn(config.bundles, alias) ? config.bundles[alias] : undefined;
    if (!bundle) {
      warnings.push(`agent '${agent}' names unknown bundle '${alias}'; it grants nothing`);
      continue;
    }
    for (const name of bundle.servers) {
      if (byName.has(name.toLowerCase())) granted.add(name.toLowerCase());
      else warnings.push(`bundle '${alias}' names unknown server '${name}'; it grants nothing`);
    }
    for (const name of bundle.exclude) denied.add(name.toLowerCase());
  }
  const servers: McpServerConfig[] = [];
  const disabled: string[] = [];
  if (config.enabled) {
    for (const server of config.servers) {
      const key = server.name.toLowerCase();
      if (!granted.has(key) || denied.has(key)) continue;
      if (server.enabled) servers.push(server);
      else disabled.push(server.name);
    }
  }
  return { agent, servers, disabled, profile, warnings };
}
