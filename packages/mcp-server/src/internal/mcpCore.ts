import { createCancellationTracker } from '@capnode/protocol';
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  isJsonContentType,
  readRequestBody,
  type InboundHttpRequest,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type McpRequestContext,
  type MessageClassification,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CapnodeMcp, CapnodeMcpOptions, CreateServerOptions, McpFetchOptions } from '../capnodeMcp.js';
import { createToolsListCache } from '../tools.js';
import { AbortLatch, hookFromSignal, type AbortHook } from './abortLatch.js';
import { buildServer, requestEntry, type ServerWiring } from './buildServer.js';
import { BOUND_MODERN_REVISION, classifyPost } from './classify.js';
import { Exchange } from './exchange.js';
import { jsonRpcErrorReply, noSessionReply, toResponse, type Reply } from './responses.js';
import { SessionlessTransport } from './sessionlessTransport.js';
import type { CallScope } from './toolCall.js';
import { supportedProtocolVersions } from './versions.js';

const DEFAULT_SERVER_INFO = { name: 'capnode', version: '0.1.0' };
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_BATCH = 100;
const KEEP_ALIVE_MS = 15_000;
const MODERN_POOL_SIZE = 64;

interface ModernRequestInfo {
  readonly lifetime: AbortHook | undefined;
  readonly canStream: boolean;
}

const NOOP = (): void => {};
const MODERN_CLASSIFICATION: MessageClassification = { era: 'modern', revision: BOUND_MODERN_REVISION };

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function acceptsEventStream(inbound: PostInbound): boolean {
  return inbound.header('accept')?.includes('text/event-stream') ?? false;
}

function echoId(body: unknown): string | number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { id, method } = body as { id?: unknown; method?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null;
}

/** The answer to a request naming a protocol version this server does not serve. */
function unsupportedVersion(requested: string, body: unknown): Reply {
  const message = `Unsupported protocol version: ${requested} (supported: ${supportedProtocolVersions.join(', ')})`;
  return jsonRpcErrorReply(400, -32022, message, { supported: supportedProtocolVersions, requested }, echoId(body));
}

function clientNameOf(ctx: ServerContext, server: Server | undefined): string | undefined {
  const info = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
  if (typeof info?.name === 'string') return info.name;
  const name = server?.getClientVersion()?.name;
  return typeof name === 'string' ? name : undefined;
}

/** True when the client declared form elicitation (`elicitation: {}` means form, as the spec says). */
function canElicitForm(server: Server | undefined): boolean {
  const elicitation = server?.getClientCapabilities()?.elicitation as { form?: unknown; url?: unknown } | undefined;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

/** The SDK's per-request signal, also aborted by the HTTP request's lifetime when there is one. */
function callSignal(signal: AbortSignal, lifetime: AbortHook | undefined): AbortSignal | AbortLatch {
  if (lifetime === undefined) return signal;
  const latch = new AbortLatch();
  if (signal.aborted) latch.abort(signal.reason);
  else signal.addEventListener('abort', () => latch.abort(signal.reason), { once: true });
  lifetime.subscribe((reason) => latch.abort(reason));
  return latch;
}

function isRequestMessage(message: unknown): message is JSONRPCRequest {
  return typeof message === 'object' && message !== null && 'method' in message && 'id' in message;
}

function isNotificationMessage(message: unknown): message is JSONRPCNotification {
  return typeof message === 'object' && message !== null && 'method' in message && !('id' in message);
}

/**
 * One parsed JSON-RPC POST, as whichever HTTP layer received it describes it: the Node layer reads
 * headers straight off `IncomingMessage` and builds no web `Request` unless the SDK's per-request
 * entry needs one.
 */
export interface PostInbound {
  readonly body: unknown;
  /** The body's text, so large numeric ids are echoed and matched exactly. */
  readonly rawBody: string | undefined;
  /** Aborts the calls this request started (deadline, client gone, shutdown). */
  readonly lifetime: AbortHook | undefined;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The web request handed to the SDK's per-request entry; `withSignal` when it must see disconnects. */
  webRequest(withSignal: boolean): Request;
}

/** The public face plus the hot-path entry the Node HTTP layer uses. */
export interface McpCore {
  readonly mcp: CapnodeMcp;
  servePost(inbound: PostInbound): Promise<Reply | Response>;
  /**
   * A fresh SDK `Server` for one HTTP session (Streamable HTTP or legacy SSE): it advertises
   * `tools.listChanged`, receives list changes while connected, and is closed by `mcp.close()`.
   * A call's signal also aborts with `lifetimeOf(ctx)`, the HTTP request that carried it (deadline,
   * disconnect, shutdown).
   */
  sessionServer(lifetimeOf: (ctx: ServerContext) => AbortHook | undefined): Server;
}

/** Builds the MCP core behind `createCapnodeMcp`, plus the hot-path `servePost` the Node HTTP layer calls. */
export function createMcpCore(options: CapnodeMcpOptions): McpCore {
  const { invoker } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const reportError = (error: unknown): void => {
    try {
      options.onError?.(toError(error));
    } catch {
      // Reporting must never break serving.
    }
  };
  const toolsList = createToolsListCache(invoker.registry);
  const toolsJson = new WeakMap<object, string>();
  const resultJson = (result: unknown): string | undefined => {
    if (result !== toolsList()) return undefined;
    let json = toolsJson.get(result as object);
    if (json === undefined) {
      json = JSON.stringify(result);
      toolsJson.set(result as object, json);
    }
    return json;
  };
  const wiring: ServerWiring = {
    serverInfo: { ...(options.serverInfo ?? DEFAULT_SERVER_INFO) },
    instructions: options.instructions,
    invoker,
    toolsList,
    onError: reportError,
  };

  const sessions = new Set<Server>();
  /**
   * A per-connection server (stdio, or one HTTP session) whose calls may stream and ask through the client's
   * elicitation; `signalOf` gives each call's abort signal. Tracked in `sessions` until it closes.
   */
  const connectionServer = (transport: CallScope['transport'], signalOf: (ctx: ServerContext) => CallScope['signal']): Server => {
    let server: Server | undefined;
    const scopeOf = (ctx: ServerContext): CallScope => ({
      transport,
      signal: signalOf(ctx),
      canStream: true,
      caller: clientNameOf(ctx, server),
      requestId: String(ctx.mcpReq.id),
      // A connection carries server-to-client requests on the call's own stream.
      canElicit: canElicitForm(server),
    });
    server = buildServer(wiring, scopeOf, true);
    const instance = server;
    sessions.add(instance);
    instance.onclose = () => {
      sessions.delete(instance);
    };
    return instance;
  };
  const createServer = (serverOptions: CreateServerOptions = {}): Server =>
    connectionServer(serverOptions.transport ?? 'mcp-stdio', (ctx) => ctx.mcpReq.signal);
  const sessionServer = (lifetimeOf: (ctx: ServerContext) => AbortHook | undefined): Server =>
    connectionServer('mcp-http', (ctx) => callSignal(ctx.mcpReq.signal, lifetimeOf(ctx)));

  /** A long-lived server behind a multiplexing transport, which knows each call's scope. */
  const multiplexed = (transport: SessionlessTransport, listChanged: boolean, boundRevision?: string): Server => {
    const server = buildServer(
      wiring,
      (ctx) => {
        const call = transport.call(ctx.mcpReq.id);
        return {
          transport: 'mcp-http',
          signal: call?.signal ?? ctx.mcpReq.signal,
          canStream: call?.canStream ?? false,
          caller: clientNameOf(ctx, undefined),
          requestId: call?.requestId ?? String(ctx.mcpReq.id),
        };
      },
      listChanged,
      boundRevision,
    );
    server.connect(transport).then(() => {
      transport.deliverRequest = requestEntry(server);
    }, reportError);
    return server;
  };

  const tracker = createCancellationTracker();
  const sessionless = new SessionlessTransport(tracker, resultJson);
  const sessionlessServer = multiplexed(sessionless, false);

  // Per-request (2026-07-28) tools/call and tools/list that need nothing of the SDK's per-request
  // entry but its checks are served by one long-lived instance bound to that revision, the way the
  // sessionless transport serves the initialize era: no instance, web Request or Response per call.
  // Whatever the SDK refuses on delivery goes to its per-request entry below for the canonical answer.
  const fastModern = new SessionlessTransport(undefined, resultJson);
  const fastModernServer = multiplexed(fastModern, true, BOUND_MODERN_REVISION);

  const modernRequests = new WeakMap<Request, ModernRequestInfo>();
  const modernScope = (ctx: ServerContext): CallScope => {
    const request = ctx.http?.req;
    const info = request === undefined ? undefined : modernRequests.get(request);
    return {
      transport: 'mcp-http',
      signal: ctx.mcpReq.signal,
      canStream: info?.canStream ?? false,
      caller: clientNameOf(ctx, undefined),
      requestId: String(ctx.mcpReq.id),
    };
  };
  // The per-request handler asks for an instance per request; idle instances are reused (an instance
  // is idle again once its single-exchange transport closed). `subscriptions/listen` is answered
  // without connecting the instance, so those requests get a fresh one that is simply dropped.
  // The request's lifetime (deadline, disconnect, shutdown) closes the instance's exchange, which
  // aborts the SDK's own per-request signal: the one signal the call runs under.
  const modernPool: Server[] = [];
  const unpooled = new WeakSet<Request>();
  const modernFactory = (context: McpRequestContext): Server => {
    const request = context.requestInfo;
    if (request !== undefined && unpooled.has(request)) return buildServer(wiring, modernScope, true);
    const server = modernPool.pop() ?? buildServer(wiring, modernScope, true);
    const lifetime = request === undefined ? undefined : modernRequests.get(request)?.lifetime;
    const detach = lifetime === undefined ? NOOP : lifetime.subscribe(() => void server.close().catch(NOOP));
    server.onclose = () => {
      detach();
      if (modernPool.length < MODERN_POOL_SIZE) modernPool.push(server);
    };
    return server;
  };
  const modern = createMcpHandler(modernFactory, { legacy: 'reject', onerror: reportError });

  let pendingListChange = false;
  const unsubscribe = invoker.registry.subscribe(() => {
    if (pendingListChange) return;
    pendingListChange = true;
    queueMicrotask(() => {
      pendingListChange = false;
      modern.notify.toolsChanged();
      for (const server of sessions) {
        if (server.transport === undefined || server.getNegotiatedProtocolVersion() === undefined) continue;
        server.sendToolListChanged().catch(NOOP);
      }
    });
  });

  let closing: Promise<void> | undefined;

  const serveLegacy = (inbound: PostInbound): Promise<Reply> => {
    const body = inbound.body;
    const batch = Array.isArray(body);
    const exchange = new Exchange({ batch, canStream: acceptsEventStream(inbound), keepAliveMs: KEEP_ALIVE_MS });
    exchange.onCancel = () => sessionless.abortExchange(exchange, new Error('the client stopped reading the response'));
    if (batch) {
      for (const message of body as unknown[]) dispatchLegacy(exchange, message, undefined, inbound.lifetime);
    } else {
      dispatchLegacy(exchange, body, inbound.rawBody, inbound.lifetime);
    }
    exchange.dispatched();
    return exchange.response;
  };

  const dispatchLegacy = (exchange: Exchange, message: unknown, text: string | undefined, lifetime: AbortHook | undefined): void => {
    if (isRequestMessage(message)) {
      exchange.expect();
      sessionless.dispatchRequest(exchange, message, text, lifetime);
    } else if (isNotificationMessage(message)) {
      sessionless.dispatchNotification(message, text);
    }
  };

  /** Hands a per-request-era POST to the SDK's own per-request entry. */
  const serveModernEntry = (inbound: PostInbound, method: string): Promise<Response> => {
    const listen = method === 'subscriptions/listen';
    const request = inbound.webRequest(listen);
    if (listen) unpooled.add(request);
    modernRequests.set(request, { lifetime: inbound.lifetime, canStream: acceptsEventStream(inbound) });
    return modern.fetch(request, { parsedBody: inbound.body });
  };

  const handlePost = (inbound: PostInbound): Reply | Promise<Reply | Response> => {
    const body = inbound.body;
    if (Array.isArray(body) && body.length > MAX_BATCH) {
      return jsonRpcErrorReply(400, -32600, `Invalid Request: a batch may carry at most ${MAX_BATCH} messages`);
    }
    const classified: { -readonly [K in keyof InboundHttpRequest]: InboundHttpRequest[K] } = { httpMethod: 'POST', body };
    const versionHeader = inbound.header('mcp-protocol-version')?.trim();
    if (versionHeader !== undefined) {
      if (!supportedProtocolVersions.includes(versionHeader)) return unsupportedVersion(versionHeader, body);
      classified.protocolVersionHeader = versionHeader;
    }
    const methodHeader = inbound.header('mcp-method');
    if (methodHeader !== undefined) classified.mcpMethodHeader = methodHeader;
    const nameHeader = inbound.header('mcp-name');
    if (nameHeader !== undefined) classified.mcpNameHeader = nameHeader;
    const outcome = classifyPost(classified);
    switch (outcome.kind) {
      case 'reject':
        return jsonRpcErrorReply(outcome.httpStatus, outcome.code, outcome.message, outcome.data, echoId(body));
      case 'modern-fast': {
        const exchange = new Exchange({ batch: false, canStream: acceptsEventStream(inbound), keepAliveMs: KEEP_ALIVE_MS });
        exchange.onCancel = () => fastModern.abortExchange(exchange, new Error('the client stopped reading the response'));
        if (fastModern.dispatchRequest(exchange, body as JSONRPCRequest, inbound.rawBody, inbound.lifetime, MODERN_CLASSIFICATION)) {
          exchange.expect();
          exchange.dispatched();
          return exchange.response;
        }
        return serveModernEntry(inbound, outcome.method);
      }
      case 'modern':
      case 'modern-entry': {
        return serveModernEntry(inbound, outcome.kind === 'modern-entry' ? outcome.method : outcome.message.method);
      }
      case 'legacy':
        return serveLegacy(inbound);
    }
  };

  const servePost = async (inbound: PostInbound): Promise<Reply | Response> => {
    if (closing !== undefined) return jsonRpcErrorReply(503, -32603, 'The server is shutting down.', undefined, null, { 'retry-after': '1' });
    try {
      return await handlePost(inbound);
    } catch (error) {
      reportError(error);
      return jsonRpcErrorReply(500, -32603, 'Internal server error', undefined, echoId(inbound.body));
    }
  };

  const fetchFace = async (request: Request, fetchOptions: McpFetchOptions): Promise<Reply | Response> => {
    if (closing !== undefined) return jsonRpcErrorReply(503, -32603, 'The server is shutting down.', undefined, null, { 'retry-after': '1' });
    if (request.method !== 'POST') return noSessionReply();
    let body = fetchOptions.parsedBody;
    let rawBody = fetchOptions.rawBody;
    if (body === undefined) {
      if (!isJsonContentType(request.headers.get('content-type'))) {
        return jsonRpcErrorReply(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
      }
      const read = await readRequestBody(request, maxBodyBytes);
      if (read.tooLarge) return jsonRpcErrorReply(413, -32000, `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`);
      rawBody = read.text;
      try {
        body = JSON.parse(read.text);
      } catch {
        return jsonRpcErrorReply(400, -32700, 'Parse error: the body is not valid JSON');
      }
    }
    return servePost({
      body,
      rawBody,
      lifetime: fetchOptions.signal === undefined ? undefined : hookFromSignal(fetchOptions.signal),
      header: (name) => request.headers.get(name) ?? undefined,
      webRequest: () => request,
    });
  };

  const mcp: CapnodeMcp = {
    async fetch(request, fetchOptions = {}) {
      return toResponse(await fetchFace(request, fetchOptions));
    },
    createServer,
    get inFlight() {
      return sessionless.activeCount + fastModern.activeCount;
    },
    close() {
      closing ??= (async () => {
        unsubscribe();
        await modern.close().catch(reportError);
        await sessionless.close().catch(reportError);
        await sessionlessServer.close().catch(reportError);
        await fastModern.close().catch(reportError);
        await fastModernServer.close().catch(reportError);
        await Promise.all([...sessions].map((server) => server.close().catch(reportError)));
        sessions.clear();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
  return { mcp, servePost, sessionServer };
}
