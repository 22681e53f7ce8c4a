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

function sanitize(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '-');
}

/** The server part for one server name: `[A-Za-z0-9_-]` only, starting with a letter, at most 30 characters. */
export function toServerPart(server: string): string {
  let part = sanitize(server);
  if (!/^[A-Za-z]/.test(part)) part = `mcp-${part}`;
  return part.slice(0, MAX_SERVER_PART);
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
 * Deterministic: the same input always yields the same names.
 */
export function assignToolNames(servers: readonly ServerToolNames[], reserved: Iterable<string> = []): ToolNaming {
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
  const tools: NamedTool[] = [];
  for (const { server, tools: names } of servers) {
    const part = serverParts.get(server)!;
    for (const tool of names) {
      const base = `${part}${NAME_SEPARATOR}${sanitize(tool) || 'tool'}`.slice(0, MAX_TOOL_NAME);
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
