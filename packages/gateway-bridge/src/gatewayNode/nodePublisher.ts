import type { GatewayClient, GatewayLogLevel } from '../connection/clientContract.js';
import type { GatewayNodeMcpTool, GatewayNodePublications, GatewayNodeSkill } from './gatewayNodeContract.js';

/** The node command family a gateway calls node-hosted MCP tools with. */
export const GATEWAY_NODE_MCP_CALL_COMMAND = 'mcp.tools.call.v1';
/** The plugin id OpenClaw reserves for node-hosted MCP tool descriptors. */
const NODE_MCP_PLUGIN_ID = 'node-mcp';
/** Names OpenClaw accepts for node-published tools. */
export const GATEWAY_NODE_TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const TOOL_NAME_MAX = 64;
/** OpenClaw keeps the first 128 descriptors of a node and cuts descriptions at 1024 characters. */
export const GATEWAY_NODE_MAX_TOOLS = 128;
const DESCRIPTION_MAX = 1024;
/** OpenClaw's node skill limits: name pattern, 64 skills, 64 KiB each, 512 KiB in all. */
const SKILL_NAME = /^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const SKILL_MAX = 64;
const SKILL_MAX_BYTES = 65_536;
const SKILLS_MAX_BYTES = 524_288;
const utf8 = new TextEncoder();
/** A failed publication is tried again after 1 s, 2 s, … up to this many times per connection. */
const PUBLISH_RETRIES = 5;
const PUBLISH_RETRY_MS = 1_000;

/** One published node-hosted MCP tool: its agent-visible name and what it maps to. */
export interface PublishedMcpTool extends GatewayNodeMcpTool {
  readonly name: string;
}

function sanitizeToolName(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9_-]+/g, '_');
  const named = /^[A-Za-z]/.test(cleaned) ? cleaned : `t_${cleaned}`;
  return named.slice(0, TOOL_NAME_MAX);
}

/**
 * Agent-visible names for `tools`, deterministic whatever their order: each `<server>__<tool>` with
 * every character OpenClaw refuses replaced by `_`, a leading non-letter prefixed `t_`, cut to 64;
 * names equal but for case get `_2`, `_3`, … in (server, tool) order. At most
 * {@link GATEWAY_NODE_MAX_TOOLS}, the rest dropped (reported by `dropped`).
 */
export function publishedToolNames(tools: readonly GatewayNodeMcpTool[]): { readonly tools: readonly PublishedMcpTool[]; readonly dropped: number } {
  const sorted = [...tools].sort((a, b) => (a.server === b.server ? (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0) : a.server < b.server ? -1 : 1));
  const used = new Set<string>();
  const seen = new Set<string>();
  const out: PublishedMcpTool[] = [];
  for (const tool of sorted) {
    const key = `${tool.server}\0${tool.tool}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const base = sanitizeToolName(`${tool.server}__${tool.tool}`);
    let name = base;
    for (let index = 2; used.has(name.toLowerCase()); index += 1) {
      const suffix = `_${index}`;
      name = `${base.slice(0, TOOL_NAME_MAX - suffix.length)}${suffix}`;
    }
    used.add(name.toLowerCase());
    out.push({ ...tool, name });
  }
  return { tools: out.slice(0, GATEWAY_NODE_MAX_TOOLS), dropped: Math.max(0, out.length - GATEWAY_NODE_MAX_TOOLS) };
}

/** The `node.pluginTools.update` descriptor of a published tool. */
function toolDescriptor(tool: PublishedMcpTool): Record<string, unknown> {
  const description = (tool.description.trim() || `Tool '${tool.tool}' of MCP server '${tool.server}'.`).slice(0, DESCRIPTION_MAX);
  return {
    pluginId: NODE_MCP_PLUGIN_ID,
    name: tool.name,
    description,
    parameters: tool.parameters ?? { type: 'object', properties: {}, additionalProperties: true },
    command: GATEWAY_NODE_MCP_CALL_COMMAND,
    mcp: { server: tool.server, tool: tool.tool },
  };
}

/** The skills OpenClaw would keep (valid name, description, size; first 64; 512 KiB in all); the rest are reported. */
export function acceptableSkills(skills: readonly GatewayNodeSkill[]): { readonly skills: readonly GatewayNodeSkill[]; readonly dropped: readonly string[] } {
  const kept: GatewayNodeSkill[] = [];
  const dropped: string[] = [];
  const names = new Set<string>();
  let total = 0;
  for (const skill of skills) {
    const bytes = utf8.encode(skill.content).length;
    const description = skill.description.trim();
    if (!SKILL_NAME.test(skill.name) || names.has(skill.name) || !description || description.length > 1024 || bytes === 0 || bytes > SKILL_MAX_BYTES || kept.length >= SKILL_MAX || total + bytes > SKILLS_MAX_BYTES) {
      dropped.push(skill.name);
      continue;
    }
    names.add(skill.name);
    total += bytes;
    kept.push({ name: skill.name, description, content: skill.content });
  }
  return { skills: kept, dropped };
}

export interface NodePublisher {
  /** The connection is up (hello received): publish the current lists. */
  connected(): void;
  /** The published tool `server`/`tool` maps to, or `undefined` when it is not published now. */
  lookup(server: string, tool: string): PublishedMcpTool | undefined;
  close(): void;
}

/**
 * Publishes the node's MCP tools (`node.pluginTools.update`) and skills (`node.skills.update`) after
 * each connect and again whenever the source changes while connected; one update runs at a time and
 * a change during it publishes once more afterwards. The gateway drops both with the connection.
 */
export function createNodePublisher(context: {
  readonly source: GatewayNodePublications;
  client(): GatewayClient;
  isConnected(): boolean;
  closed(): boolean;
  log(level: GatewayLogLevel, message: string): void;
}): NodePublisher {
  const { source, log } = context;
  let published = new Map<string, PublishedMcpTool>();
  let running = false;
  let again = false;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  // The gateway refuses an update racing its own pairing bookkeeping (PAIRING_CHANGED): try again shortly.
  const retryLater = () => {
    if (retry || failures > PUBLISH_RETRIES) return;
    retry = setTimeout(() => {
      retry = undefined;
      void publish();
    }, PUBLISH_RETRY_MS * failures);
    (retry as { unref?: () => void }).unref?.();
  };

  const current = () => {
    const named = publishedToolNames(source.mcpTools());
    if (named.dropped > 0) log('warning', `publishing the first ${GATEWAY_NODE_MAX_TOOLS} MCP tools to the gateway; ${named.dropped} more are left out (the gateway keeps at most ${GATEWAY_NODE_MAX_TOOLS})`);
    const skills = acceptableSkills(source.skills());
    if (skills.dropped.length > 0) log('warning', `skills not published (invalid name, description or size): ${skills.dropped.join(', ')}`);
    return { tools: named.tools, skills: skills.skills };
  };

  const publish = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        if (context.closed() || !context.isConnected()) return;
        const next = current();
        // Calls are checked against the new list from now on, so a withdrawn tool is refused at once.
        published = new Map(next.tools.map((tool) => [`${tool.server}\0${tool.tool}`, tool]));
        try {
          const client = context.client();
          await client.request('node.pluginTools.update', { tools: next.tools.map(toolDescriptor) }, { waitForConnection: false });
          await client.request('node.skills.update', { skills: next.skills.map((skill) => ({ ...skill })) }, { waitForConnection: false });
          failures = 0;
          log('info', `published ${next.tools.length} MCP tools and ${next.skills.length} skills to the gateway`);
        } catch (error) {
          // A closed connection publishes again on the next connect.
          if (!context.closed() && context.isConnected()) {
            failures += 1;
            log('warning', `could not publish MCP tools and skills to the gateway${failures <= PUBLISH_RETRIES ? '; trying again' : ''}: ${error instanceof Error ? error.message : String(error)}`);
            retryLater();
          }
        }
      } while (again);
    } finally {
      running = false;
    }
  };

  const unsubscribe = source.subscribe(() => void publish());
  return {
    connected: () => {
      failures = 0;
      void publish();
    },
    lookup: (server, tool) => published.get(`${server}\0${tool}`),
    close() {
      unsubscribe();
      if (retry) clearTimeout(retry);
    },
  };
}
