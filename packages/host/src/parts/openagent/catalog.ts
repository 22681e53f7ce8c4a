import type { ConsentSettings, RegisteredCommand, Registry } from '@capnode/capabilities';
import type { OpenAgentCatalogServer, OpenAgentCatalogTool, OpenAgentClassification } from '@capnode/protocol/openagent';

/** The catalog server that carries the registry's own commands. */
export const CAPNODE_SERVER = 'capnode';

/** Catalog quotas of the server (`capabilities.py`): servers, tools, tools per server, text sizes, encoded bytes. */
export const CATALOG_LIMITS = {
  servers: 128,
  tools: 4096,
  toolsPerServer: 1024,
  nameChars: 200,
  descriptionChars: 64 * 1024,
  encodedBytes: 1024 * 1024,
} as const;

/** Where an imported MCP server's tool lives in the registry: its exposed command name. */
export interface ImportedToolOrigin {
  readonly server: string;
  readonly tool: string;
}

/** What the catalog is built from, read each time it is built. */
export interface CatalogSources {
  readonly registry: Registry;
  readonly consent: () => ConsentSettings;
  /** `openagent.servers`: which catalog servers are offered. */
  readonly servers: 'all' | readonly string[];
  /** Imported tools by exposed command name (category `mcp`), when imported servers run. */
  readonly imported?: () => ReadonlyMap<string, ImportedToolOrigin>;
}

/** Why a call's target is not served. */
export type CatalogMiss = 'tool_not_found' | 'consent_required';

/** The catalog offered to the server, and the way back from a (server, tool) to the command that runs it. */
export interface OpenAgentCatalog {
  readonly servers: readonly OpenAgentCatalogServer[];
  /** Stable text of `servers`: equal texts mean an unchanged catalog. */
  readonly key: string;
  /** Tools left out to keep within the quotas. */
  readonly dropped: number;
  resolve(server: string, tool: string): { readonly command: string; readonly tool: OpenAgentCatalogTool } | CatalogMiss;
}

/** The classification a command's annotations give: read-only, idempotent, else mutating. */
export function classificationOf(command: RegisteredCommand): OpenAgentClassification {
  const annotations = command.definition.annotations;
  if (annotations?.readOnly === true && annotations.destructive !== true) return 'read_only';
  if (annotations?.idempotent === true && annotations.destructive !== true) return 'idempotent';
  return 'mutating';
}

function toolOf(name: string, command: RegisteredCommand): OpenAgentCatalogTool {
  const description = command.definition.description.slice(0, CATALOG_LIMITS.descriptionChars);
  const byArgument = command.definition.classificationByArgument;
  return {
    name,
    ...(description ? { description } : {}),
    input_schema: command.inputSchema,
    classification: classificationOf(command),
    ...(byArgument && Object.keys(byArgument).length > 0 ? { classification_by_argument: byArgument } : {}),
  };
}

/** A command is held back while a consent category it always needs is `off`. */
function consentOff(command: RegisteredCommand, consent: ConsentSettings): boolean {
  const category = command.definition.consent;
  return category !== undefined && consent[category] === 'off';
}

/**
 * Builds the catalog: server `capnode` with the registry's commands (local-only and imported ones
 * and those whose consent category is off left out), then one server per imported MCP server, each
 * when `servers` allows it; names with `:` and tools beyond the quotas are left out.
 */
export function buildOpenAgentCatalog(sources: CatalogSources): OpenAgentCatalog {
  const allowed = (name: string) => !name.includes(':') && name.length <= CATALOG_LIMITS.nameChars && (sources.servers === 'all' || sources.servers.includes(name));
  const consent = sources.consent();
  const byServer = new Map<string, Map<string, { command: RegisteredCommand; tool?: OpenAgentCatalogTool }>>();
  const add = (server: string, tool: string, command: RegisteredCommand, offered: boolean) => {
    let tools = byServer.get(server);
    if (!tools) byServer.set(server, (tools = new Map()));
    tools.set(tool, { command, ...(offered ? { tool: toolOf(tool, command) } : {}) });
  };
  if (allowed(CAPNODE_SERVER)) {
    for (const command of sources.registry.commands({ excludeLocalOnly: true })) {
      if (command.category !== 'mcp') add(CAPNODE_SERVER, command.name, command, !consentOff(command, consent));
    }
  }
  const imported = sources.imported?.() ?? new Map<string, ImportedToolOrigin>();
  for (const command of sources.registry.commands()) {
    const origin = command.category === 'mcp' ? imported.get(command.name) : undefined;
    if (origin && origin.server !== CAPNODE_SERVER && allowed(origin.server)) add(origin.server, origin.tool, command, true);
  }
  let total = 0;
  let dropped = 0;
  let bytes = 2;
  const servers: OpenAgentCatalogServer[] = [];
  for (const [name, tools] of byServer) {
    if (servers.length >= CATALOG_LIMITS.servers) break;
    const offered: OpenAgentCatalogTool[] = [];
    for (const entry of tools.values()) {
      if (!entry.tool) continue;
      const size = Buffer.byteLength(JSON.stringify(entry.tool)) + 1;
      if (offered.length >= CATALOG_LIMITS.toolsPerServer || total >= CATALOG_LIMITS.tools || bytes + size > CATALOG_LIMITS.encodedBytes - 1024) {
        dropped += 1;
        continue;
      }
      offered.push(entry.tool);
      total += 1;
      bytes += size;
    }
    if (offered.length > 0) servers.push({ name, tools: offered });
  }
  const offeredSet = new Set(servers.flatMap((server) => server.tools.map((tool) => `${server.name}\u0000${tool.name}`)));
  return {
    servers,
    key: JSON.stringify(servers),
    dropped,
    resolve(server, tool) {
      const entry = byServer.get(server)?.get(tool);
      if (!entry) return 'tool_not_found';
      if (!entry.tool) return 'consent_required';
      if (!offeredSet.has(`${server}\u0000${tool}`)) return 'tool_not_found';
      return { command: entry.command.name, tool: entry.tool };
    },
  };
}
