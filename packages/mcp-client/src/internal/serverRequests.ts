import { ProtocolError, ProtocolErrorCode, type Client, type ClientCapabilities, type ElicitResult } from '@modelcontextprotocol/client';
import { capText } from '../redact.js';
import type { CallElicitor, ElicitationHandler, SamplingHandler, ServerRequestContext } from '../types.js';
import { CONTENT_LIMITS, checkJson } from './contentLimits.js';

// Server-initiated requests (sampling, elicitation, roots): which capabilities the client declares,
// and the handlers that answer them. A capability is declared only when something can answer it;
// an undeclared request has no handler, so the SDK refuses it with JSON-RPC `MethodNotFound`.

/** Longest elicitation message passed to a caller's client. */
const MAX_ELICIT_MESSAGE = 2_000;

/** The harness's answers to server-initiated requests (from the runtime options). */
export interface ServerRequestHooks {
  readonly onSampling?: SamplingHandler;
  readonly onElicitation?: ElicitationHandler;
  readonly forwardElicitation?: boolean;
  readonly roots?: NonNullable<import('../types.js').McpRuntimeOptions['roots']>;
}

/** What the handlers need from the session of one client. */
export interface ServerRequestTarget {
  readonly server: string;
  readonly scrub: (text: string) => string;
  /** The elicitor of the one call in flight that can take a question, if exactly one can. */
  elicitor(): CallElicitor | undefined;
}

/** The capabilities a client with these hooks declares at `initialize`. */
export function clientCapabilities(hooks: ServerRequestHooks): ClientCapabilities {
  return {
    ...(hooks.onSampling ? { sampling: {} } : {}),
    // Only the harness can take URL mode; a caller's client is asked form questions only.
    ...(hooks.onElicitation ? { elicitation: { form: {}, url: {} } } : hooks.forwardElicitation ? { elicitation: { form: {} } } : {}),
    ...(hooks.roots ? { roots: { listChanged: true } } : {}),
  };
}

/** Installs the handlers for the declared capabilities on a fresh client. */
export function installServerRequests(client: Client, hooks: ServerRequestHooks, target: ServerRequestTarget): void {
  const contextOf = (signal: AbortSignal): ServerRequestContext => ({ server: target.server, signal });
  const { onSampling, onElicitation, roots } = hooks;
  if (onSampling) {
    client.setRequestHandler('sampling/createMessage', async (request, ctx) => onSampling(request.params, contextOf(ctx.mcpReq.signal)));
  }
  if (onElicitation || hooks.forwardElicitation) {
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const params = request.params;
      const elicit = params.mode === 'url' ? undefined : target.elicitor();
      if (elicit && 'requestedSchema' in params) return forward(elicit, params, target, ctx.mcpReq.signal);
      if (onElicitation) return onElicitation(params, contextOf(ctx.mcpReq.signal));
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'No client can answer this elicitation now.');
    });
  }
  if (roots) {
    client.setRequestHandler('roots/list', async (_request, ctx) => {
      const list = typeof roots === 'function' ? await roots(contextOf(ctx.mcpReq.signal)) : roots;
      return { roots: [...list] };
    });
  }
}

/**
 * Puts a server's form question to the client of the call that caused it: the message scrubbed,
 * capped and prefixed with the server's name (the user must see who asks); a schema over the
 * content limits is refused rather than passed on.
 */
async function forward(elicit: CallElicitor, params: { message: string; requestedSchema: unknown }, target: ServerRequestTarget, signal: AbortSignal): Promise<ElicitResult> {
  const check = checkJson(params.requestedSchema, CONTENT_LIMITS.inputSchema);
  if (!check.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestedSchema is ${check.reason}`);
  const message = capText(`MCP server '${target.server}' asks: ${target.scrub(params.message)}`, MAX_ELICIT_MESSAGE);
  const answer = await elicit({ message, requestedSchema: params.requestedSchema as Parameters<CallElicitor>[0]['requestedSchema'] }, { signal });
  return answer.action === 'accept' ? { action: 'accept', content: (answer.content ?? {}) as ElicitResult['content'] } : { action: answer.action };
}
