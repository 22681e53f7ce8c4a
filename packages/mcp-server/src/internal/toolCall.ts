import type { AbortSignalLike, ClientConnection, ElicitationRequest, ElicitationResult, InvocationRequest, InvokeOptions, Invoker, LogLevel, ProgressUpdate } from '@capnode/capabilities';
import { MAX_ARGUMENTS_DEPTH, exceedsJsonDepth } from '@capnode/protocol';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, inputRequired, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { isPlainObject } from '@capnode/toolkit';
import { toCallToolResult, toolError } from '../tools.js';

/** What the serving transport knows about one `tools/call` beyond its params. */
export interface CallScope {
  readonly transport: 'mcp-http' | 'mcp-stdio';
  /** Aborted on cancellation, request deadline, disconnect or shutdown. */
  readonly signal: AbortSignalLike;
  /** Whether progress and log notifications can reach the client before the result. */
  readonly canStream: boolean;
  readonly caller?: string | undefined;
  /** The name of the token the call's HTTP request authenticated with (verified, unlike `caller`). */
  readonly client?: string | undefined;
  /** The client's JSON-RPC id as text, for audit. */
  readonly requestId: string;
  /**
   * Whether the client declared form elicitation and can be asked through `elicitation/create`
   * before the result (stdio). 2026-07-28 HTTP calls are asked through `input_required` instead; the
   * initialize-era sessionless HTTP transport can do neither.
   */
  readonly canElicit?: boolean;
  /** The connection (stdio, stateful HTTP session) the call came on; events a command sends later go to it. */
  readonly connection?: ClientConnection | undefined;
}

/** The calling client's name from a per-request envelope (`io.modelcontextprotocol/clientInfo`). */
export function envelopeClientName(envelope: Record<string, unknown> | undefined): string | undefined {
  const info = envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
  return typeof info?.name === 'string' ? info.name : undefined;
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

function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/** The `inputRequests` key of the approval question in an `input_required` result. */
const APPROVAL_INPUT_KEY = 'capnode-approval';

/** The pipeline's `elicit` for a 2026-07-28 client, answered on the retry of the call, and the question it recorded. */
interface RetryElicitation {
  readonly elicit: NonNullable<InvokeOptions['elicit']>;
  asked(): ElicitationRequest | undefined;
}

/**
 * For a per-request (2026-07-28) call from a client that declared form elicitation: the question goes
 * out as an `input_required` result, the client's SDK asks its user and retries the call with the
 * answer in `inputResponses` and the question's key echoed as `requestState`. The state only names
 * which question the answer is for; the answer itself is the client's, as with any elicitation.
 */
function retryElicitation(ctx: ServerContext): RetryElicitation | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  if (!isPlainObject(elicitation) || (elicitation.url !== undefined && elicitation.form === undefined)) return undefined;
  const response = ctx.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY];
  const state = ctx.mcpReq.requestState<unknown>();
  let asked: ElicitationRequest | undefined;
  return {
    async elicit(request) {
      if (request.key !== undefined && state === request.key && isPlainObject(response)) {
        const action = response.action;
        if (action === 'accept' || action === 'decline' || action === 'cancel') {
          return { action, ...(isPlainObject(response.content) ? { content: response.content } : {}) };
        }
      }
      asked = request;
      throw new Error('the client answers on the retry');
    },
    asked: () => asked,
  };
}

/** The `input_required` result carrying the approval question. */
function approvalInputRequired(question: ElicitationRequest): CallToolResult {
  return inputRequired({
    inputRequests: {
      [APPROVAL_INPUT_KEY]: {
        method: 'elicitation/create',
        params: { mode: 'form', message: question.message, requestedSchema: question.requestedSchema as never },
      },
    },
    ...(question.key === undefined ? {} : { requestState: question.key }),
  }) as unknown as CallToolResult;
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
    // Assigned, not spread: object spreads were a measurable share of a call.
    const request: { -readonly [K in keyof InvocationRequest]: InvocationRequest[K] } = { command: name, args: params.arguments, transport: scope.transport, requestId: scope.requestId };
    if (scope.caller !== undefined) request.caller = scope.caller;
    if (scope.client !== undefined) request.client = scope.client;
    if (scope.connection !== undefined) request.connection = scope.connection;
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
    const retry = options.elicit === undefined ? retryElicitation(ctx) : undefined;
    if (retry) {
      options.elicit = retry.elicit;
      options.elicitOnRetry = true;
    }
    const outcome = await invoker.invoke(request, options);
    const question = retry?.asked();
    if (question && !outcome.result.ok && outcome.result.error.code === 'approval_pending') return approvalInputRequired(question);
    // SDK clients dispatch notifications a microtask after responses that arrive in the same read,
    // so a progress notification written right before the result would reach a dropped handler.
    if (progressSent) await new Promise((resolve) => setTimeout(resolve, PROGRESS_FLUSH_MS));
    return toCallToolResult(outcome.result);
  } catch (error) {
    onError(error);
    return toolError(`${name} failed with an internal error.`, 'internal');
  }
}
