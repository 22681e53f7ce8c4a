import type { Invoker } from '@capnode/capabilities';
import { SlotMap } from '@capnode/toolkit';
import {
  ProtocolError,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  Server,
  isJSONRPCRequest,
  type BaseContext,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type jsonSchemaValidator,
  type ListToolsResult,
  type MessageExtraInfo,
  type Result,
  type ServerContext,
  type ServerOptions,
  type Transport,
} from '@modelcontextprotocol/server';
import { runToolCall, type CallScope } from './toolCall.js';

/** What every SDK server instance capnode builds shares. */
export interface ServerWiring {
  readonly serverInfo: Implementation;
  readonly instructions?: string | undefined;
  readonly invoker: Invoker;
  readonly toolsList: () => ListToolsResult;
  readonly onError: (error: unknown) => void;
}

/** The capnode server never validates elicitation answers; this keeps AJV out of every instance. */
const NO_SCHEMA_VALIDATION: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/**
 * A `Map`, not an object literal: a method name is client input, and looking up `constructor` or
 * `__proto__` in an object finds `Object.prototype` members (a function result is not JSON).
 */
const EMPTY_LISTS: ReadonlyMap<string, Result> = new Map<string, Result>([
  ['resources/list', { resources: [] }],
  ['resources/templates/list', { resourceTemplates: [] }],
  ['prompts/list', { prompts: [] }],
]);

function isInboundRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return typeof message === 'object' && message !== null && 'method' in message && !('result' in message) && !('error' in message) && isJSONRPCRequest(message);
}

/**
 * The SDK `Server`, with its close hook building the connection-closed error it hands to pending
 * handlers without a stack trace. A per-request (2026-07-28) exchange closes its instance after
 * every call, and capturing that stack was a measurable share of each call; the error never reaches
 * a client. The limit is restored before any other code runs (the instance's own `onclose`).
 */
class CapnodeServer extends Server {
  /**
   * `boundRevision` binds the instance to that per-request (2026-07-28 or later) revision for its
   * whole life, as the SDK's per-request entry does for each of its single-exchange instances; the
   * revision must be among `options.supportedProtocolVersions`.
   */
  constructor(serverInfo: Implementation, options: ServerOptions, boundRevision?: string) {
    super(serverInfo, options);
    if (boundRevision !== undefined) this._negotiatedProtocolVersion = boundRevision;
    useSlotMapForAbortControllers(this);
  }

  /**
   * Connects as the SDK does, then routes inbound requests straight to the request entry. The SDK's
   * router tries both response schemas before the request schema, and those two failing zod parses
   * were a measurable share of every stdio call. A message with `method` and neither `result` nor
   * `error` can match no response schema, so skipping them changes no routing decision; anything
   * else goes through the SDK's router unchanged.
   */
  override async connect(transport: Transport): Promise<void> {
    const earlier = transport.onmessage;
    await super.connect(transport);
    const route = transport.onmessage;
    const entry = requestEntry(this);
    if (earlier !== undefined || route === undefined || entry === undefined) return;
    transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if (isInboundRequest(message)) entry(message, extra);
      else route(message, extra);
    };
  }

  /**
   * The SDK's handler context, assembled without its object spreads. On Node 20 (V8 11) an object made
   * by a spread and then extended gets a hidden class of its own, and such an object survives
   * young-generation collections together with every closure and request object it reaches: the
   * context of every request went to the old generation that way. `log`, `elicitInput`,
   * `requestSampling` and `http` still come from the SDK's own `buildContext`, built on first use
   * (`http` whenever there is HTTP information, exactly when the SDK adds it).
   */
  protected override buildContext(ctx: BaseContext, transportInfo?: MessageExtraInfo): ServerContext {
    let built: ServerContext | undefined;
    const sdk = (): ServerContext => (built ??= super.buildContext(ctx, transportInfo));
    const mcpReq = Object.assign({}, ctx.mcpReq) as ServerContext['mcpReq'];
    mcpReq.log = (level, data, logger) => sdk().mcpReq.log(level, data, logger);
    mcpReq.elicitInput = (params, options) => sdk().mcpReq.elicitInput(params, options);
    mcpReq.requestSampling = (params, options) => sdk().mcpReq.requestSampling(params, options);
    const hasHttpInfo =
      ctx.http !== undefined ||
      transportInfo?.request !== undefined ||
      transportInfo?.closeSSEStream !== undefined ||
      transportInfo?.closeStandaloneSSEStream !== undefined;
    const http = hasHttpInfo ? sdk().http : undefined;
    return Object.assign({}, ctx, { mcpReq, http }) as ServerContext;
  }

  protected override _onclose(): void {
    const limit = Error.stackTraceLimit;
    const onclose = this.onclose;
    let restored = false;
    const restore = (): void => {
      if (restored) return;
      restored = true;
      Error.stackTraceLimit = limit;
      if (onclose === undefined) delete this.onclose;
      else this.onclose = onclose;
    };
    Error.stackTraceLimit = 0;
    this.onclose = () => {
      restore();
      onclose?.();
    };
    try {
      super._onclose();
    } finally {
      restore();
      useSlotMapForAbortControllers(this);
    }
  }
}

/**
 * The SDK keeps one AbortController per in-flight request in a `Map` on the instance (the one place
 * besides `requestEntry` that touches its internals; a missing field leaves the instance as it is). A
 * long-lived instance churns that map on every request, which promotes whole request graphs to the
 * old generation (see `SlotMap`); the SDK only calls get/set/delete/values on it.
 */
function useSlotMapForAbortControllers(server: Server): void {
  const target = server as unknown as { _requestHandlerAbortControllers?: unknown };
  if (target._requestHandlerAbortControllers instanceof Map) target._requestHandlerAbortControllers = new SlotMap();
}

/**
 * Builds one low-level SDK `Server` over the live registry. The SDK owns the protocol (initialize,
 * ping, versions, logging/setLevel, framing, errors); capnode answers `tools/list` from the registry
 * cache and `tools/call` through the pipeline.
 *
 * `tools/call` is served from the fallback handler so that malformed params reach capnode and come
 * back as tool errors (model-correctable) instead of the SDK's `-32602`. `resources/*` and
 * `prompts/list` answer empty lists for clients that ask regardless of capabilities.
 */
export function buildServer(
  wiring: ServerWiring,
  scopeOf: (ctx: ServerContext) => CallScope,
  listChanged: boolean,
  boundRevision?: string,
): Server {
  const options: ServerOptions = {
    capabilities: { tools: { listChanged }, logging: {} },
    jsonSchemaValidator: NO_SCHEMA_VALIDATION,
    ...(wiring.instructions === undefined ? {} : { instructions: wiring.instructions }),
    ...(boundRevision === undefined ? {} : { supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, boundRevision] }),
  };
  const server = new CapnodeServer(wiring.serverInfo, options, boundRevision);
  server.setRequestHandler('tools/list', () => wiring.toolsList());
  server.fallbackRequestHandler = async (request: JSONRPCRequest, ctx: ServerContext): Promise<Result> => {
    if (request.method === 'tools/call') {
      return runToolCall(wiring.invoker, request.params, ctx, scopeOf(ctx), wiring.onError) as Promise<Result>;
    }
    const empty = EMPTY_LISTS.get(request.method);
    if (empty !== undefined) return empty;
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
  };
  server.onerror = wiring.onError;
  return server;
}

/**
 * The SDK server's own request entry (`_onrequest`, typed private: the one place capnode reaches for
 * it), bypassing its generic message router. That router tells messages apart by trying the response
 * schemas first, so every inbound request pays two failing zod parses, and zod's failure results keep
 * the parsed message alive until the next full GC (most of the garbage a call made was promoted).
 * `CapnodeServer.connect` uses it for wire messages after a request check; the sessionless transport
 * hands it requests it has already classified. `undefined` when this SDK build has no such entry; the
 * caller then uses `transport.onmessage`.
 */
export function requestEntry(server: Server): ((message: JSONRPCRequest, extra?: MessageExtraInfo) => void) | undefined {
  const entry = (server as unknown as { _onrequest?: unknown })._onrequest;
  if (typeof entry !== 'function') return undefined;
  return (message, extra) => (entry as (message: JSONRPCRequest, extra?: MessageExtraInfo) => void).call(server, message, extra);
}

/** The facts of one sessionless `tools/call` the direct entry needs (see {@link directToolCall}). */
export interface DirectCall {
  readonly signal: CallScope['signal'];
  readonly canStream: boolean;
  readonly requestId: string;
}

/**
 * `tools/call` of the initialize era on the long-lived sessionless `server`, without the SDK's request
 * entry: for that era the entry only looks the method up, builds an AbortController and a context, and
 * hands the handler's result back unchanged (the era's codec encodes a `tools/call` result as it is), and
 * those per-call objects were the largest share of its cost. The call runs through the same
 * `runToolCall` (pipeline, policy, audit, validation); progress and log notifications go out through the
 * server related to the call, as the SDK's own context sends them (the log through the SDK's context).
 * Only messages without reserved `io.modelcontextprotocol/` `_meta` keys take it: the SDK lifts those.
 */
export function directToolCall(wiring: ServerWiring, server: Server): (message: JSONRPCRequest, call: DirectCall) => Promise<Result> {
  const buildContext = (server as unknown as { buildContext(ctx: BaseContext): ServerContext }).buildContext.bind(server);
  return (message, call) => {
    const id = message.id;
    const notify = (notification: Parameters<Server['notification']>[0]): Promise<void> => server.notification(notification, { relatedRequestId: id });
    const params = message.params as { _meta?: Record<string, unknown> } | undefined;
    const base = {
      sessionId: undefined,
      mcpReq: {
        id,
        method: message.method,
        _meta: params?._meta,
        requestState: NO_REQUEST_STATE,
        signal: call.signal as AbortSignal,
        send: () => Promise.reject(new Error('a sessionless call cannot send requests to the client')),
        notify,
      },
      http: undefined,
    } as unknown as BaseContext;
    const ctx = buildContext(base);
    const scope: CallScope = { transport: 'mcp-http', signal: call.signal, canStream: call.canStream, caller: undefined, requestId: call.requestId };
    return runToolCall(wiring.invoker, message.params, ctx, scope, wiring.onError) as Promise<Result>;
  };
}

const NO_REQUEST_STATE = (): undefined => undefined;

/** True when `params._meta` carries a reserved `io.modelcontextprotocol/` key (the SDK lifts those into an envelope). */
export function hasReservedMeta(params: unknown): boolean {
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  if (typeof meta !== 'object' || meta === null) return false;
  for (const key in meta) if (key.startsWith('io.modelcontextprotocol/')) return true;
  return false;
}
