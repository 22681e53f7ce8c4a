import type { AbortSignalLike, InvocationRequest, InvokeOptions, Invoker, LogLevel, ProgressUpdate } from '@capnode/capabilities';
import { MAX_ARGUMENTS_DEPTH, exceedsJsonDepth } from '@capnode/protocol';
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { toCallToolResult, toolError } from '../tools.js';

/** What the serving transport knows about one `tools/call` beyond its params. */
export interface CallScope {
  readonly transport: 'mcp-http' | 'mcp-stdio';
  /** Aborted on cancellation, request deadline, disconnect or shutdown. */
  readonly signal: AbortSignalLike;
  /** Whether progress and log notifications can reach the client before the result. */
  readonly canStream: boolean;
  readonly caller?: string | undefined;
  /** The client's JSON-RPC id as text, for audit. */
  readonly requestId: string;
}

const NOOP = (): void => {};
const PROGRESS_FLUSH_MS = 5;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/**
 * Serves one `tools/call` through the invocation pipeline. Malformed params, unknown tools, bad
 * arguments and capability failures all come back as tool errors; an unexpected exception is reported
 * to `onError` and answered with a generic tool error, so no internal message reaches the client.
 */
export async function runToolCall(
  invoker: Invoker,
  params: unknown,
  ctx: ServerContext,
  scope: CallScope,
  onError: (error: unknown) => void,
): Promise<CallToolResult> {
  if (!isPlainObject(params)) return toolError('Invalid tools/call request: params must be an object with a string "name".', 'invalid_arguments');
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) return toolError('Invalid tools/call request: "name" must be a non-empty string.', 'invalid_arguments');
  if (exceedsJsonDepth(params.arguments, MAX_ARGUMENTS_DEPTH)) {
    return toolError(`Invalid arguments for ${name}: they nest deeper than ${MAX_ARGUMENTS_DEPTH} levels.`, 'invalid_arguments');
  }
  if (scope.signal.aborted) return toolError(`${name} was cancelled.`, 'cancelled');
  let progressSent = false;
  try {
    const request: InvocationRequest = {
      command: name,
      args: params.arguments,
      transport: scope.transport,
      requestId: scope.requestId,
      ...(scope.caller === undefined ? {} : { caller: scope.caller }),
    };
    const options: { -readonly [K in keyof InvokeOptions]: InvokeOptions[K] } = { signal: scope.signal };
    if (scope.canStream) {
      const progressToken = progressTokenOf(params);
      if (progressToken !== undefined) {
        options.onProgress = (update: ProgressUpdate) => {
          progressSent = true;
          ctx.mcpReq
            .notify({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress: update.progress,
                ...(update.total === undefined ? {} : { total: update.total }),
                ...(update.message === undefined ? {} : { message: update.message }),
              },
            })
            .catch(NOOP);
        };
      }
      options.onLog = (level: LogLevel, message: string) => {
        ctx.mcpReq.log(level, message).catch(NOOP);
      };
    }
    const outcome = await invoker.invoke(request, options);
    // SDK clients dispatch notifications a microtask after responses that arrive in the same read,
    // so a progress notification written right before the result would reach a dropped handler.
    if (progressSent) await new Promise((resolve) => setTimeout(resolve, PROGRESS_FLUSH_MS));
    return toCallToolResult(outcome.result);
  } catch (error) {
    onError(error);
    return toolError(`${name} failed with an internal error.`, 'internal');
  }
}
