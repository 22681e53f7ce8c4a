import { PORTABLE_TOOL_NAME, toolNameIn, type CapabilityErrorCode, type CommandResult, type RegisteredCommand, type Registry, type ToolNameStyle } from '@capnode/capabilities';
import type { CallToolResult, ListToolsResult, Tool, ToolAnnotations } from '@modelcontextprotocol/server';

/**
 * Maps a registered command to the MCP `Tool` that `tools/list` advertises: the command name (in
 * `style`'s spelling, default `dotted`: as registered), its description, the JSON Schema computed at
 * registration, and the annotations as MCP hints.
 */
export function toMcpTool(command: RegisteredCommand, style: ToolNameStyle = 'dotted'): Tool {
  const { description, annotations } = command.definition;
  const tool: Tool = { name: toolNameIn(command.name, style), description, inputSchema: command.inputSchema as Tool['inputSchema'] };
  if (annotations === undefined) return tool;
  const hints: ToolAnnotations = {};
  if (annotations.title !== undefined) hints.title = annotations.title;
  if (annotations.readOnly !== undefined) hints.readOnlyHint = annotations.readOnly;
  if (annotations.destructive !== undefined) hints.destructiveHint = annotations.destructive;
  if (annotations.idempotent !== undefined) hints.idempotentHint = annotations.idempotent;
  if (annotations.openWorld !== undefined) hints.openWorldHint = annotations.openWorld;
  if (annotations.title !== undefined) tool.title = annotations.title;
  if (Object.keys(hints).length > 0) tool.annotations = hints;
  return tool;
}

/**
 * The `_meta` key of an `isError` tool result that carries its machine-readable failure:
 * `_meta: { "capnode/failure": { code } }`, `code` being a {@link CapabilityErrorCode} (`denied`,
 * `invalid_arguments`, `unknown_command`, `timeout`, …). Callers branch on the code, never on the text.
 */
export const FAILURE_META_KEY = 'capnode/failure';

/** What {@link FAILURE_META_KEY} holds. */
export interface ToolFailureMeta {
  readonly code: CapabilityErrorCode;
  /**
   * The command's own finer reason when it gives one (`data.code`, e.g. `COMPUTER_STALE_FRAME`,
   * `LOCATION_DISABLED`): the same code a gateway caller gets.
   */
  readonly reason?: string;
}

/** A command's `data.code` when it is a short upper-case code name (never free text). */
function failureReason(data: Record<string, unknown> | undefined): string | undefined {
  const reason = data?.code;
  return typeof reason === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(reason) ? reason : undefined;
}

/**
 * Maps a pipeline result to an MCP `CallToolResult`: content passes through, structured data becomes
 * `structuredContent`, and a failure becomes `isError: true` with its message as text, so the model
 * sees the reason and can correct itself (a failure is never a JSON-RPC error), and its code under
 * `_meta["capnode/failure"]`, so programs can tell failures apart.
 */
export function toCallToolResult(result: CommandResult): CallToolResult {
  if (!result.ok) return toolError(result.error.message, result.error.code, failureReason(result.error.data));
  const content = result.content as CallToolResult['content'];
  return result.structured === undefined ? { content } : { content, structuredContent: result.structured };
}

/** A tool error result carrying `message` as its only text content and `code` (and `reason`) under {@link FAILURE_META_KEY}. */
export function toolError(message: string, code: CapabilityErrorCode, reason?: string): CallToolResult {
  const failure: ToolFailureMeta = reason === undefined ? { code } : { code, reason };
  return { content: [{ type: 'text', text: message }], isError: true, _meta: { [FAILURE_META_KEY]: failure } };
}

/** The failure code of a tool result, or `undefined` when it is no error or carries none. */
export function toolFailureCode(result: { readonly isError?: boolean | undefined; readonly _meta?: Record<string, unknown> | undefined }): string | undefined {
  if (result.isError !== true) return undefined;
  const failure = result._meta?.[FAILURE_META_KEY] as { code?: unknown } | undefined;
  return typeof failure?.code === 'string' ? failure.code : undefined;
}

/**
 * Returns the `tools/list` result for the registry's current contents in a connection's name style,
 * rebuilt only when `registry.version` changed, so every listing is live yet costs nothing when nothing
 * changed. An `underscore` listing leaves out a command whose underscore spelling still is no
 * {@link PORTABLE_TOOL_NAME} (other characters than letters, digits, `.`, `_` and `-`, or longer than
 * 64): such a listing is for harnesses that refuse the whole request over one bad name. That command
 * stays callable by its name; `onOmitted` is told its name once per rebuild.
 */
export function createToolsListCache(registry: Registry, onOmitted?: (name: string) => void): (style: ToolNameStyle) => ListToolsResult {
  let version = -1;
  let dotted: ListToolsResult = { tools: [] };
  let underscore: ListToolsResult | undefined;
  return (style) => {
    if (registry.version !== version) {
      version = registry.version;
      dotted = { tools: registry.commands().map((command) => toMcpTool(command)) };
      underscore = undefined;
    }
    if (style === 'dotted') return dotted;
    if (underscore === undefined) {
      const tools: Tool[] = [];
      for (const command of registry.commands()) {
        const tool = toMcpTool(command, 'underscore');
        if (PORTABLE_TOOL_NAME.test(tool.name)) tools.push(tool);
        else onOmitted?.(command.name);
      }
      underscore = { tools };
    }
    return underscore;
  };
}
