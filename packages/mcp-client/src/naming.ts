/** Longest server part of an exposed tool name. */
export const MAX_SERVER_PART = 30;
/** Longest exposed tool name (what model providers accept). */
export const MAX_TOOL_NAME = 64;
/** Between the server part and the tool part. */
export const NAME_SEPARATOR = '__';

/** A server and the tool names it listed, in listing order. */
export interface ServerToolNames {
  readonly server: string;
  readonly tools: readonly string[];
}

/** One exposed tool: the name the model sees, and what it routes to. */
export interface NamedTool {
  readonly name: string;
  readonly server: string;
  readonly tool: string;
}

/** The result of {@link assignToolNames}. */
export interface ToolNaming {
  readonly tools: readonly NamedTool[];
  /** Server name → its server part (after sanitizing and de-duplication). */
  readonly serverParts: ReadonlyMap<string, string>;
  /** One line per renamed collision, naming both sides. */
  readonly warnings: readonly string[];
}

/** Options of {@link assignToolNames}. */
export interface ToolNamingOptions {
  /**
   * Names already handed out (for example by an earlier build of a catalog that grows as servers
   * arrive). Each one is kept for the same server and tool when it is still free and still carries
   * that server's part, so a name a model has seen never moves to another tool; a newcomer that
   * collides with it gets the suffix instead.
   */
  readonly keep?: Iterable<NamedTool>;
}

function sanitize(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '-');
}

/**
 * The server part for one server name: `[A-Za-z0-9_-]` only, starting with a letter, at most 30
 * characters, never containing `__` nor ending in `_` (runs of `_` become one, a trailing `_`
 * becomes `-`). So the first `__` of an exposed name always ends the server part, and tools of two
 * servers can never collide: every server's names depend only on the configuration and that
 * server's own listing, not on which servers are connected or in what order they arrived.
 */
export function toServerPart(server: string): string {
  let part = sanitize(server).replace(/_{2,}/g, '_');
  if (!/^[A-Za-z]/.test(part)) part = `mcp-${part}`;
  return part.slice(0, MAX_SERVER_PART).replace(/_$/, '-');
}

function withSuffix(base: string, n: number, max: number): string {
  const suffix = `-${n}`;
  return base.slice(0, max - suffix.length) + suffix;
}

/**
 * Gives every tool of every server a unique exposed name `<server>__<tool>`.
 *
 * Characters outside `[A-Za-z0-9_-]` become `-`; a server part that does not start with a letter
 * gets an `mcp-` prefix; the server part is at most 30 characters and the whole name at most 64.
 * Names are compared case-insensitively; a collision gets `-2`, `-3`, … within the length budget
 * and a warning naming both sides. `reserved` names (built-in commands) are never handed out.
 * Deterministic: the same input always yields the same names; collisions go to the earlier server
 * in `servers` order (the configured order), except that `options.keep` names stay with their owner.
 */
export function assignToolNames(servers: readonly ServerToolNames[], reserved: Iterable<string> = [], options: ToolNamingOptions = {}): ToolNaming {
  const warnings: string[] = [];
  const serverParts = new Map<string, string>();
  const partOwners = new Map<string, string>();
  for (const { server } of servers) {
    if (serverParts.has(server)) continue;
    const base = toServerPart(server);
    let part = base;
    for (let n = 2; partOwners.has(part.toLowerCase()); n += 1) part = withSuffix(base, n, MAX_SERVER_PART);
    if (part !== base) warnings.push(`server '${server}' uses the name prefix '${part}': '${base}' is already used by server '${partOwners.get(base.toLowerCase())}'`);
    partOwners.set(part.toLowerCase(), server);
    serverParts.set(server, part);
  }

  const owners = new Map<string, { server: string; tool: string } | undefined>();
  for (const name of reserved) owners.set(name.toLowerCase(), undefined);
  const kept = new Map<string, string>();
  if (options.keep) {
    const listed = new Set(servers.flatMap(({ server, tools: names }) => names.map((tool) => `${server}\u0000${tool}`)));
    for (const { name, server, tool } of options.keep) {
      const key = `${server}\u0000${tool}`;
      const part = serverParts.get(server);
      const lower = name.toLowerCase();
      if (!listed.has(key) || kept.has(key) || part === undefined || owners.has(lower)) continue;
      if (!lower.startsWith(`${part}${NAME_SEPARATOR}`.toLowerCase()) || name.length > MAX_TOOL_NAME) continue;
      owners.set(lower, { server, tool });
      kept.set(key, name);
    }
  }
  const tools: NamedTool[] = [];
  for (const { server, tools: names } of servers) {
    const part = serverParts.get(server)!;
    for (const tool of names) {
      const base = `${part}${NAME_SEPARATOR}${sanitize(tool) || 'tool'}`.slice(0, MAX_TOOL_NAME);
      const keptName = kept.get(`${server}\u0000${tool}`);
      if (keptName !== undefined) {
        kept.delete(`${server}\u0000${tool}`);
        if (keptName.toLowerCase() !== base.toLowerCase()) {
          const owner = owners.get(base.toLowerCase());
          const other = owner ? `tool '${owner.tool}' of server '${owner.server}'` : owners.has(base.toLowerCase()) ? 'a built-in command' : undefined;
          warnings.push(`tool '${tool}' of server '${server}' is exposed as '${keptName}'${other ? `: '${base}' is already taken by ${other}` : ' (kept from when it was first published)'}`);
        }
        tools.push({ name: keptName, server, tool });
        continue;
      }
      let name = base;
      for (let n = 2; owners.has(name.toLowerCase()); n += 1) name = withSuffix(base, n, MAX_TOOL_NAME);
      if (name !== base) {
        const owner = owners.get(base.toLowerCase());
        const other = owner ? `tool '${owner.tool}' of server '${owner.server}'` : 'a built-in command';
        warnings.push(`tool '${tool}' of server '${server}' is exposed as '${name}': '${base}' is already taken by ${other}`);
      }
      owners.set(name.toLowerCase(), { server, tool });
      tools.push({ name, server, tool });
    }
  }
  return { tools, serverParts, warnings };
}
