import { isToolNameStyle, type ToolNameStyle } from '@capnode/capabilities';
import { JsonRpcErrorCode } from '@capnode/protocol';
import { errorReply, type Reply } from './jsonRpcReplies.js';

/** The query parameter of the MCP URL that selects a connection's tool name style. */
export const TOOL_NAMES_QUERY = 'toolNames';
/** The request header that selects it (the query parameter wins when both are present). */
export const TOOL_NAMES_HEADER = 'capnode-tool-names';

/**
 * The tool name style an HTTP request selects with `?toolNames=` or the `Capnode-Tool-Names` header:
 * `undefined` when it selects none, a 400 reply naming the accepted values for anything else.
 */
const NONE_SELECTED = { toolNames: undefined } as const;

export function selectedToolNames(target: string | undefined, header: string | undefined): { readonly toolNames: ToolNameStyle | undefined } | { readonly reply: Reply } {
  const start = target?.indexOf('?') ?? -1;
  const query = target === undefined || start < 0 ? undefined : (new URLSearchParams(target.slice(start + 1)).get(TOOL_NAMES_QUERY) ?? undefined);
  const value = query ?? header?.trim();
  if (value === undefined) return NONE_SELECTED;
  if (isToolNameStyle(value)) return { toolNames: value };
  const from = query === undefined ? 'the Capnode-Tool-Names header' : `?${TOOL_NAMES_QUERY}=`;
  return {
    reply: errorReply(400, JsonRpcErrorCode.InvalidRequest, `Invalid Request: ${from} must be 'dotted' or 'underscore', got ${JSON.stringify(value.slice(0, 40))}`),
  };
}
