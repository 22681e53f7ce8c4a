import type { AbortSignalLike, ElicitationRequest, ElicitationResult, InvocationRequest, InvokeOptions, Invoker, LogLevel, ProgressUpdate } from '@capnode/capabilities';
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
  /**
   * Whether the client declared form elicitation and can be asked through `elicitation/create`
   * before the result (stdio today; the sessionless HTTP transport cannot carry the client's answer).
   */
  readonly canElicit?: boolean;
}

/** How long a question put to the user through the client may stay open; the approval's own timeout ends it sooner. */
const ELICITATION_TIMEOUT_MS = 60 * 60_000;

/** The pipeline's `elicit` over the SDK's `elicitInput` (form mode). */
function elicitThrough(ctx: ServerContext): NonNullable<InvokeOptions['elicit']> {
  return async (request: ElicitationRequest, { signal }): Promise<ElicitationResult> => {
    const result = await ctx.mcpReq.elicitInput(
      { mode: 'form', message: request.message, requestedSchema: request.requestedSchema as never },
      { signal, timeout: ELICITATION_TIMEOUT_MS },
    );
    return { action: result.action, ...(result.content === undefined ? {} : { content: result.content }) };
  };
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
  if (!isPlainObject(params)) return toolError('Invalid tools/call request: params must be an object with a string "name".');
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) return toolError('Invalid tools/call request: "name" must be a non-empty string.');
  if (scope.signal.aborted) return toolError(`${name} was cancelled.`);
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
      if (scope.canElicit) options.elicit = elicitThrough(ctx);
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
    return toolError(`${name} failed with an internal error.`);
  }
}
