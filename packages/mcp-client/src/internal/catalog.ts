import type { CommandDefinition } from '@capnode/capabilities';
import { assignToolNames, type NamedTool } from '../naming.js';
import type { ToolPolicy } from '../policy.js';
import type { Logger } from '../types.js';
import type { ServerSession } from './serverSession.js';
import { republishTool, type RepublishedTool } from './serverClaims.js';
import type { ListedTool } from './toolListing.js';

/** One imported tool under its exposed name. */
export interface CatalogEntry extends Omit<ListedTool, 'annotations'>, RepublishedTool {
  readonly exposed: string;
  readonly server: string;
}

/** Imported tools kept from one server, by default. */
export const DEFAULT_MAX_TOOLS_PER_SERVER = 512;
/** Imported tools kept from all servers together, by default. */
export const DEFAULT_MAX_TOOLS_TOTAL = 2048;

/**
 * Each server's tools within the caps, in server order: a server's overflow and the total's are
 * dropped and named in the warnings, so a catalog (or a loop through servers) never grows without bound.
 */
function boundTools(sessions: readonly ServerSession[], perServer: number, total: number): { lists: { server: string; tools: readonly ListedTool[] }[]; warnings: string[] } {
  const warnings: string[] = [];
  let left = total;
  const lists = sessions.map((session) => {
    const listed = session.tools;
    const kept = listed.slice(0, Math.min(perServer, Math.max(left, 0)));
    if (listed.length > perServer) warnings.push(`server '${session.server.name}' lists ${listed.length} tools; only the first ${perServer} are imported (the per-server limit)`);
    if (kept.length < Math.min(listed.length, perServer)) {
      warnings.push(`server '${session.server.name}': ${Math.min(listed.length, perServer) - kept.length} tools not imported: the catalog holds at most ${total} imported tools`);
    }
    left -= kept.length;
    return { server: session.server.name, tools: kept };
  });
  return { lists, warnings };
}

/** What {@link Catalog.rebuild} needs beside the sessions. */
export interface CatalogOptions {
  readonly policy: ToolPolicy;
  readonly logger: Logger;
  /** Names taken by others (the runtime's own tools, a host's built-in commands). */
  readonly reserved: () => readonly string[];
  /** The built-in resource/prompt commands offered when some server supports them. */
  readonly serverCommands: { readonly resources: CommandDefinition; readonly prompts: CommandDefinition };
  /** Wraps a built-in command's execute (closed check, error mapping). */
  readonly wrapBuiltin: (command: CommandDefinition) => CommandDefinition;
  /** Caps on imported tools (see {@link DEFAULT_MAX_TOOLS_PER_SERVER}, {@link DEFAULT_MAX_TOOLS_TOTAL}). */
  readonly maxTools?: { readonly perServer?: number | undefined; readonly total?: number | undefined } | undefined;
}

/**
 * The imported tools as the agent sees them: exposed names (stable across rebuilds while a tool stays
 * listed), the policy filter, case-insensitive lookup, and the built-in resource/prompt tools.
 */
export class Catalog {
  entries: CatalogEntry[] = [];
  builtins: CommandDefinition[] = [];
  namingWarnings: string[] = [];
  /** Set when a server's tools changed; {@link rebuild} is a no-op otherwise. */
  dirty = true;
  #byName = new Map<string, CatalogEntry>();
  #serverParts = new Map<string, string>();
  /** Names handed out so far: kept for their tools while those stay listed, whatever order servers arrive in. */
  #published: readonly NamedTool[] = [];
  readonly #options: CatalogOptions;

  constructor(options: CatalogOptions) {
    this.#options = options;
  }

  /** The entry exposed under `name` (case-insensitive). */
  get(name: string): CatalogEntry | undefined {
    return this.#byName.get(name.toLowerCase());
  }

  /** Which server and tool a call name means, for the policy hook; `*` for the built-in tools. */
  lookup(name: string): { server: string; tool: string } | undefined {
    const entry = this.get(name);
    if (entry) return { server: entry.server, tool: entry.name };
    return this.builtins.some((command) => command.name === name) ? { server: '*', tool: name } : undefined;
  }

  /** The server part of exposed names for `server`. */
  serverPart(server: string): string {
    return this.#serverParts.get(server) ?? server;
  }

  /** Recomputes names, policy filter and built-ins from the sessions; returns whether anything was rebuilt. */
  rebuild(sessions: readonly ServerSession[]): boolean {
    if (!this.dirty) return false;
    this.dirty = false;
    const { policy, logger } = this.#options;
    const bounded = boundTools(sessions, this.#options.maxTools?.perServer ?? DEFAULT_MAX_TOOLS_PER_SERVER, this.#options.maxTools?.total ?? DEFAULT_MAX_TOOLS_TOTAL);
    const naming = assignToolNames(
      bounded.lists.map((list) => ({ server: list.server, tools: list.tools.map((tool) => tool.name) })),
      this.#options.reserved(),
      { keep: this.#published },
    );
    this.#published = naming.tools;
    const known = new Set(this.namingWarnings);
    this.namingWarnings = [...bounded.warnings, ...naming.warnings];
    this.#serverParts = new Map(naming.serverParts);
    const { resources, prompts } = this.#options.serverCommands;
    this.builtins = [
      ...(sessions.some((session) => session.capabilities.resources) ? [resources] : []),
      ...(sessions.some((session) => session.capabilities.prompts) ? [prompts] : []),
    ]
      .filter((command) => policy.isAuthorized(command.name))
      .map((command) => this.#options.wrapBuiltin(command));
    for (const warning of this.namingWarnings) if (!known.has(warning)) logger.warn(`mcp: ${warning}`);
    const toolsByServer = new Map(bounded.lists.map((list) => [list.server, new Map(list.tools.map((tool) => [tool.name, tool]))]));
    const trusted = new Set(sessions.filter((session) => session.server.trusted === true).map((session) => session.server.name));
    this.entries = naming.tools.flatMap((named) => {
      const tool = toolsByServer.get(named.server)?.get(named.tool);
      if (!tool || !policy.isAuthorized(named.name)) return [];
      return [{ ...tool, ...republishTool(named.server, tool.description, tool.annotations, trusted.has(named.server)), exposed: named.name, server: named.server }];
    });
    this.#byName = new Map(this.entries.map((entry) => [entry.exposed.toLowerCase(), entry]));
    return true;
  }
}
