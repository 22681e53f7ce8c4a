import type { Invoker, ToolNameStyle } from '@capnode/capabilities';
import { SlotMap, isPlainObject } from '@capnode/toolkit';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  SERVER_INFO_META_KEY,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  Server,
  isJSONRPCRequest,
  type BaseContext,
  type CallToolResult,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type jsonSchemaValidator,
  type ListToolsResult,
  type MessageExtraInfo,
  type Result,
  type ServerCapabilities,
  type ServerContext,
  type ServerOptions,
  type Transport,
} from '@modelcontextprotocol/server';
import { envelopeClientName, runToolCall, type CallScope } from './toolCall.js';

/** What every SDK server instance capnode builds shares. */
export interface ServerWiring {
  readonly serverInfo: Implementation;
  readonly instructions?: string | undefined;
  readonly experimental?: Readonly<Record<string, Record<string, unknown>>> | undefined;
  readonly invoker: Invoker;
  /** The live `tools/list` result in a name style. */
  readonly toolsList: (style: ToolNameStyle) => ListToolsResult;
  /** The name style of a connection that selected none. Default `dotted`. */
  readonly toolNames?: ToolNameStyle | undefined;
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
  /** The per-request revision the instance is bound to for its whole life, if any. */
  readonly boundRevision: string | undefined;

  constructor(serverInfo: Implementation, options: ServerOptions, boundRevision?: string) {
    super(serverInfo, options);
    this.boundRevision = boundRevision;
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
 * `prompts/list` answer empty lists for clients that ask regardless of capabilities. `toolNamesOf`
 * gives the name style of the connection a `tools/list` came on (default: `wiring.toolNames`).
 */
export function buildServer(
  wiring: ServerWiring,
  scopeOf: (ctx: ServerContext) => CallScope,
  listChanged: boolean,
  boundRevision?: string,
  toolNamesOf?: (ctx: ServerContext) => ToolNameStyle | undefined,
): Server {
  const options: ServerOptions = {
    capabilities: { tools: { listChanged }, logging: {}, ...(wiring.experimental === undefined ? {} : { experimental: { ...wiring.experimental } as NonNullable<ServerCapabilities['experimental']> }) },
    jsonSchemaValidator: NO_SCHEMA_VALIDATION,
    ...(wiring.instructions === undefined ? {} : { instructions: wiring.instructions }),
    ...(boundRevision === undefined ? {} : { supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, boundRevision] }),
  };
  const server = new CapnodeServer(wiring.serverInfo, options, boundRevision);
  const fallbackNames = wiring.toolNames ?? 'dotted';
  server.setRequestHandler('tools/list', (_request, ctx) => wiring.toolsList(toolNamesOf?.(ctx) ?? fallbackNames));
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

/** The facts of one `tools/call` the direct entry needs (see {@link directToolCall}). */
export interface DirectCall {
  readonly signal: CallScope['signal'];
  readonly canStream: boolean;
  readonly requestId: string;
  /** The name of the token the call's HTTP request authenticated with. */
  readonly client?: string | undefined;
}

/** Serves one `tools/call` without the SDK's request entry, or returns `undefined` when only that entry may serve it. */
export type DirectToolCall = (message: JSONRPCRequest, call: DirectCall) => Promise<Result> | undefined;

/** The two steps of the instance's wire codec the direct entry repeats. */
interface WireCodecSeam {
  checkInboundEnvelope(material: { readonly envelope?: Record<string, unknown> }): string | undefined;
  encodeResult(method: string, result: Result, serverInfo: unknown): Result;
}

/** The SDK `Server` members the direct entry uses besides its public API (pinned by the SDK seam contract test). */
interface DirectSeam {
  _wireCodec(): WireCodecSeam;
  _outboundServerInfo(): unknown;
  buildContext(ctx: BaseContext): ServerContext;
}

function directSeamOf(server: Server): DirectSeam | undefined {
  const seam = server as unknown as Partial<DirectSeam>;
  if (typeof seam._wireCodec !== 'function' || typeof seam._outboundServerInfo !== 'function' || typeof seam.buildContext !== 'function') return undefined;
  return seam as DirectSeam;
}

/** The reserved per-request envelope keys the SDK lifts out of `params._meta` before a handler runs. */
export const ENVELOPE_META_KEYS: readonly string[] = [PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY];

/** `params._meta` as a handler sees it and the envelope lifted out of it. */
interface LiftedMeta {
  readonly meta: unknown;
  readonly envelope: Record<string, unknown> | undefined;
}

const NOTHING_LIFTED: LiftedMeta = { meta: undefined, envelope: undefined };

/**
 * Splits `params._meta` as the SDK's request entry does; `undefined` for a retry of a per-request
 * call (`inputResponses` or `requestState` in params), whose material only the SDK's entry decodes.
 */
function liftMeta(params: unknown): LiftedMeta | undefined {
  if (!isPlainObject(params)) return NOTHING_LIFTED;
  if ('inputResponses' in params || 'requestState' in params) return undefined;
  const meta = params._meta;
  if (!isPlainObject(meta)) return { meta, envelope: undefined };
  let envelope: Record<string, unknown> | undefined;
  for (const key of ENVELOPE_META_KEYS) if (key in meta) (envelope ??= {})[key] = meta[key];
  if (envelope === undefined) return { meta, envelope };
  // The own keys of `_meta` but the envelope's, in order (what the SDK's spread-and-delete leaves),
  // built without `delete`, which turns an object into a slow dictionary.
  let rest: Record<string, unknown> | undefined;
  for (const key of Object.keys(meta)) {
    if (ENVELOPE_META_KEYS.includes(key)) continue;
    rest ??= {};
    if (key === '__proto__') Object.defineProperty(rest, key, { value: meta[key], enumerable: true, writable: true, configurable: true });
    else rest[key] = meta[key];
  }
  return { meta: rest, envelope };
}

const ENVELOPE_MEMO_SIZE = 32;
const ENVELOPE_MEMO_DEPTH = 8;

/**
 * Whether two parsed JSON values are equal (object key order aside), looking at most `depth` levels
 * down; deeper values count as unequal. No allocation: this runs on every 2026-07-28 call.
 */
function sameJson(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth === 0) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index += 1) if (!sameJson(a[index], b[index], depth - 1)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key], depth - 1)) return false;
    count += 1;
  }
  for (const key in right) if (--count < 0 || !Object.hasOwn(left, key)) return false;
  return count === 0;
}

/**
 * The codec's envelope check, remembered per envelope value: a client sends the same envelope with
 * every call, and its schema parse was a measurable share of a 2026-07-28 call. The outcome depends
 * only on the JSON value, so an envelope equal to a remembered one (a private copy, compared
 * structurally) gets the remembered outcome.
 */
function createEnvelopeCheck(): (codec: WireCodecSeam, envelope: Record<string, unknown> | undefined) => boolean {
  let memoCodec: WireCodecSeam | undefined;
  let memo: Array<{ readonly envelope: unknown; readonly accepted: boolean }> = [];
  return (codec, envelope) => {
    if (envelope === undefined) return codec.checkInboundEnvelope({}) === undefined;
    if (codec !== memoCodec) {
      memoCodec = codec;
      memo = [];
    }
    for (const entry of memo) if (sameJson(entry.envelope, envelope, ENVELOPE_MEMO_DEPTH)) return entry.accepted;
    const accepted = codec.checkInboundEnvelope({ envelope }) === undefined;
    if (memo.length >= ENVELOPE_MEMO_SIZE) memo = [];
    memo.push({ envelope: structuredClone(envelope), accepted });
    return accepted;
  };
}

/** The revision whose result encoding {@link stamped2026} repeats. */
const STAMPED_REVISION = '2026-07-28';

/**
 * What the 2026-07-28 codec's `encodeResult('tools/call', …)` makes of the two success shapes
 * `runToolCall` returns — `{ content }` and `{ content, structuredContent }` — built as one literal:
 * the codec copies the result twice (to add `resultType: 'complete'`, then `_meta` with the server
 * info), which was the largest share of a 2026-07-28 call. Any other shape, or no server info, is
 * `undefined` and left to the codec. `sdkSeam.contract.test.ts` holds both to the same bytes.
 */
function stamped2026(result: CallToolResult, serverInfo: unknown): Result | undefined {
  if (serverInfo === undefined) return undefined;
  let count = 0;
  for (const key in result) {
    if (key !== (count === 0 ? 'content' : 'structuredContent')) return undefined;
    count += 1;
  }
  const _meta: Record<string, unknown> = { [SERVER_INFO_META_KEY]: serverInfo };
  if (count === 1) return { content: result.content, resultType: 'complete', _meta } as Result;
  return { content: result.content, structuredContent: result.structuredContent, resultType: 'complete', _meta } as Result;
}

const NOT_DIRECT: DirectToolCall = () => undefined;
const NO_REQUEST_STATE = (): undefined => undefined;

/**
 * `tools/call` on a long-lived multiplexed `server` (the initialize-era sessionless server and the
 * per-request server bound to 2026-07-28 alike), without the SDK's request entry: for `tools/call`
 * that entry lifts the envelope out of `_meta`, checks it with the instance's wire codec, builds an
 * AbortController and a context, runs the handler and encodes its result with the same codec, and
 * its per-call objects and promise hops were the largest share of a call's cost. This repeats exactly
 * those steps with the instance's own codec (so results are byte-identical, 2026-07-28 `resultType`
 * and server-info stamping included) and runs the same `runToolCall` (pipeline, policy, audit,
 * validation) under the call's own signal. A request the codec's envelope check refuses, or a retry
 * carrying `inputResponses`/`requestState`, is left to the SDK's entry (`undefined`), which owns
 * those answers. Progress and log notifications go out through `server` related to the call, as the
 * SDK's own context sends them.
 */
export function directToolCall(wiring: ServerWiring, server: Server): DirectToolCall {
  const seam = directSeamOf(server);
  if (seam === undefined) return NOT_DIRECT;
  const envelopeAccepted = createEnvelopeCheck();
  const stamps = server instanceof CapnodeServer && server.boundRevision === STAMPED_REVISION;
  return (message, call) => {
    const lifted = liftMeta(message.params);
    if (lifted === undefined) return undefined;
    const codec = seam._wireCodec();
    if (!envelopeAccepted(codec, lifted.envelope)) return undefined;
    const ctx = new DirectContext(server, seam, message, call.signal, lifted);
    const scope: CallScope = { transport: 'mcp-http', signal: call.signal, canStream: call.canStream, caller: envelopeClientName(lifted.envelope), client: call.client, requestId: call.requestId };
    return runToolCall(wiring.invoker, message.params, ctx as unknown as ServerContext, scope, wiring.onError).then((result) => {
      try {
        const serverInfo = seam._outboundServerInfo();
        return (stamps ? stamped2026(result, serverInfo) : undefined) ?? codec.encodeResult('tools/call', result as Result, serverInfo);
      } catch (error) {
        wiring.onError(new Error(`Failed to encode result for tools/call: ${String(error)}`));
        throw error;
      }
    });
  };
}

/**
 * The handler context of a direct call, built without the SDK's context assembly (two object copies
 * and three closures per call). It holds what the SDK's request entry would put there for a
 * multiplexed `tools/call`; `log`, `elicitInput` and `requestSampling` come from the SDK's own context,
 * built on first use.
 */
class DirectRequestContext {
  readonly id: JSONRPCRequest['id'];
  readonly method: string;
  readonly _meta: unknown;
  readonly envelope: Record<string, unknown> | undefined;
  readonly signal: CallScope['signal'];
  readonly send = rejectServerRequest;
  readonly requestState = NO_REQUEST_STATE;
  readonly #server: Server;
  readonly #seam: DirectSeam;
  #sdk: ServerContext | undefined = undefined;

  constructor(server: Server, seam: DirectSeam, message: JSONRPCRequest, signal: CallScope['signal'], lifted: LiftedMeta) {
    this.id = message.id;
    this.method = message.method;
    this._meta = lifted.meta;
    this.envelope = lifted.envelope;
    this.signal = signal;
    this.#server = server;
    this.#seam = seam;
  }

  notify(notification: Parameters<Server['notification']>[0]): Promise<void> {
    return this.#server.notification(notification, { relatedRequestId: this.id });
  }

  log(...args: Parameters<ServerContext['mcpReq']['log']>): ReturnType<ServerContext['mcpReq']['log']> {
    return this.#sdkContext().mcpReq.log(...args);
  }

  elicitInput(...args: Parameters<ServerContext['mcpReq']['elicitInput']>): ReturnType<ServerContext['mcpReq']['elicitInput']> {
    return this.#sdkContext().mcpReq.elicitInput(...args);
  }

  requestSampling(...args: Parameters<ServerContext['mcpReq']['requestSampling']>): ReturnType<ServerContext['mcpReq']['requestSampling']> {
    return this.#sdkContext().mcpReq.requestSampling(...args);
  }

  /** The SDK's own context for this call, as its request entry would build it. */
  #sdkContext(): ServerContext {
    if (this.#sdk === undefined) {
      const mcpReq: Record<string, unknown> = {
        id: this.id,
        method: this.method,
        _meta: this._meta,
        requestState: NO_REQUEST_STATE,
        signal: this.signal,
        send: rejectServerRequest,
        notify: (notification: Parameters<Server['notification']>[0]) => this.notify(notification),
      };
      if (this.envelope !== undefined) mcpReq.envelope = this.envelope;
      this.#sdk = this.#seam.buildContext({ sessionId: undefined, mcpReq, http: undefined } as unknown as BaseContext);
    }
    return this.#sdk;
  }
}

/** {@link DirectRequestContext} in the shape of a handler context. */
class DirectContext {
  readonly sessionId = undefined;
  readonly http = undefined;
  readonly mcpReq: DirectRequestContext;

  constructor(server: Server, seam: DirectSeam, message: JSONRPCRequest, signal: CallScope['signal'], lifted: LiftedMeta) {
    this.mcpReq = new DirectRequestContext(server, seam, message, signal, lifted);
  }
}

function rejectServerRequest(): Promise<never> {
  return Promise.reject(new Error('a multiplexed call cannot send requests to the client'));
}
