import { mcpEndpoint, type Context } from '../context.js';
import type { CallResult } from '../output.js';
import { formatContent } from '../output.js';
import { rpcCall } from '../rpc.js';

/** `capnode status`: the running host's own report (the local-only `app.status` tool). */
export async function status(context: Context): Promise<number> {
  const result = (await rpcCall(mcpEndpoint(context), 'tools/call', { name: 'app.status', arguments: {} })) as CallResult;
  if (context.json) context.out(JSON.stringify(result.structuredContent ?? result, null, 2));
  else context.out(formatContent(result.content ?? []));
  return result.isError ? 1 : 0;
}
