import { createCancellationTracker } from '@capnode/protocol';
import { isJsonContentType, type InboundHttpRequest, type JSONRPCNotification, type JSONRPCRequest, type MessageClassification, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { CapnodeMcp, CapnodeMcpOptions, McpFetchOptions } from '../capnodeMcp.js';
import { createToolsListCache } from '../tools.js';
import { hookFromSignal, readWebBody, type AbortHook } from '@capnode/toolkit/http';
import { directToolCall, type ServerWiring } from './buildServer.js';
import { BOUND_MODERN_REVISION, classifyPost } from './classify.js';
import { createConnectionServers } from './connectionServers.js';
import { Exchange } from './exchange.js';
import { createModernEntry, multiplexedServer } from './modernEntry.js';
import { acceptsEventStream, type PostInbound } from './postInbound.js';
import { PARSE_ERROR, SHUTTING_DOWN, UNSUPPORTED_MEDIA_TYPE, batchTooLarge, errorReply, internalError, noSessionReply, payloadTooLarge, toResponse, unsupportedVersion, type Reply } from './jsonRpcReplies.js';
import { SessionlessTransport } from './sessionlessTransport.js';
import { TOOL_NAMES_HEADER, selectedToolNames } from './toolNameSelection.js';
import type { ToolNameStyle } from '@capnode/capabilities';
import { supportedProtocolVersions } from './versions.js';

export type { PostInbound } from './postInbound.js';

const DEFAULT_SERVER_INFO = { name: 'capnode', version: '0.1.0' };
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_BATCH = 100;
const KEEP_ALIVE_MS = 15_000;

const MODERN_CLASSIFICATION: MessageClassification = { era: 'modern', revision: BOUND_MODERN_REVISION };

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function echoId(body: unknown): string | number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { id, method } = body as { id?: unknown; method?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null;
}

function isRequestMessage(message: unknown): message is JSONRPCRequest {
  return typeof message === 'object' && message !== null && 'method' in message && 'id' in message;
}

function isNotificationMessage(message: unknown): message is JSONRPCNotification {
  return typeof message === 'object' && message !== null && 'method' in message && !('id' in message);
}

/** The web face's POST as a {@link PostInbound}, or the error reply when its body is not JSON-RPC-shaped JSON within `maxBodyBytes`. */
async function readFetchPost(request: Request, fetchOptions: McpFetchOptions, maxBodyBytes: number): Promise<{ inbound: PostInbound } | { reply: Reply }> {
  let body = fetchOptions.parsedBody;
  let rawBody = fetchOptions.rawBody;
  if (body === undefined) {
    if (!isJsonContentType(request.headers.get('content-type'))) {
      return { reply: UNSUPPORTED_MEDIA_TYPE };
    }
    const read = await readWebBody(request, maxBodyBytes);
    if (read.kind === 'too-large') return { reply: payloadTooLarge(maxBodyBytes, false) };
    if (read.kind === 'aborted') return { reply: PARSE_ERROR };
    rawBody = read.text;
    try {
      body = JSON.parse(read.text);
    } catch {
      return { reply: PARSE_ERROR };
    }
  }
  const selected = selectedToolNames(request.url, request.headers.get(TOOL_NAMES_HEADER) ?? undefined);
  if ('reply' in selected) return { reply: selected.reply };
  return {
    inbound: {
      body,
      rawBody,
      toolNames: selected.toolNames,
      lifetime: fetchOptions.signal === undefined ? undefined : hookFromSignal(fetchOptions.signal),
      header: (name) => request.headers.get(name) ?? undefined,
      webRequest: () => request,
    },
  };
}

/** The classification input of a POST: its body and the MCP headers; a reply when the version header names a revision this server does not serve. */
function classificationOf(inbound: PostInbound): InboundHttpRequest | Reply {
  const body = inbound.body;
  const classified: { -readonly [K in keyof InboundHttpRequest]: InboundHttpRequest[K] } = { httpMethod: 'POST', body };
  const versionHeader = inbound.header('mcp-protocol-version')?.trim();
  if (versionHeader !== undefined) {
    if (!supportedProtocolVersions.includes(versionHeader)) return unsupportedVersion(versionHeader, echoId(body));
    classified.protocolVersionHeader = versionHeader;
  }
  const methodHeader = inbound.header('mcp-method');
  if (methodHeader !== undefined) classified.mcpMethodHeader = methodHeader;
  const nameHeader = inbound.header('mcp-name');
  if (nameHeader !== undefined) classified.mcpNameHeader = nameHeader;
  return classified;
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
  sessionServer(lifetimeOf: (ctx: ServerContext) => AbortHook | undefined, toolNames?: ToolNameStyle, transport?: 'mcp-http' | 'mcp-stdio'): Server;
}

/**
 * What every server instance of the core shares (server info, invoker, the cached tool list), and the
 * cached JSON text of the current `tools/list` result, so the sessionless paths serialize it once per change.
 */
function createWiring(options: CapnodeMcpOptions, reportError: (error: unknown) => void): { wiring: ServerWiring; resultJson: (result: unknown) => string | undefined } {
  const cache = createToolsListCache(options.invoker.registry, (name) =>
    reportError(new Error(`${name} is left out of underscore tools/list results: its name has characters other than letters, digits, '.', '_' and '-', or is longer than 64`)),
  );
  // Every listing handed out (either style); its JSON text is cached with it.
  const listings = new WeakSet<object>();
  const toolsList = (style: ToolNameStyle) => {
    const result = cache(style);
    listings.add(result);
    return result;
  };
  const toolsJson = new WeakMap<object, string>();
  const resultJson = (result: unknown): string | undefined => {
    if (typeof result !== 'object' || result === null || !listings.has(result)) return undefined;
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
    experimental: options.experimentalCapabilities,
    invoker: options.invoker,
    toolsList,
    toolNames: options.toolNames ?? 'dotted',
    onError: reportError,
  };
  return { wiring, resultJson };
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
  const { wiring, resultJson } = createWiring(options, reportError);

  const connections = createConnectionServers(wiring);
  const tracker = createCancellationTracker();
  const sessionless = new SessionlessTransport(tracker, resultJson);
  const sessionlessServer = multiplexedServer(wiring, sessionless, reportError, false);
  sessionless.directCall = directToolCall(wiring, sessionlessServer);

  // Per-request (2026-07-28) tools/call and tools/list that need nothing of the SDK's per-request
  // entry but its checks are served by one long-lived instance bound to that revision, the way the
  // sessionless transport serves the initialize era: no instance, web Request or Response per call.
  // Whatever the SDK refuses on delivery goes to its per-request entry below for the canonical answer.
  const fastModern = new SessionlessTransport(undefined, resultJson);
  const fastModernServer = multiplexedServer(wiring, fastModern, reportError, true, BOUND_MODERN_REVISION);
  fastModern.directCall = directToolCall(wiring, fastModernServer);
  const modern = createModernEntry(wiring, reportError);

  let pendingListChange = false;
  const unsubscribe = invoker.registry.subscribe(() => {
    if (pendingListChange) return;
    pendingListChange = true;
    queueMicrotask(() => {
      pendingListChange = false;
      modern.toolsChanged();
      connections.toolsChanged();
    });
  });

  let closing: Promise<void> | undefined;

  const dispatchLegacy = (exchange: Exchange, message: unknown, text: string | undefined, lifetime: AbortHook | undefined): void => {
    if (isRequestMessage(message)) {
      exchange.expect();
      sessionless.dispatchRequest(exchange, message, text, lifetime);
    } else if (isNotificationMessage(message)) {
      sessionless.dispatchNotification(message, text);
    }
  };

  const serveLegacy = (inbound: PostInbound): Promise<Reply> => {
    const body = inbound.body;
    const batch = Array.isArray(body);
    const exchange = new Exchange({ batch, canStream: acceptsEventStream(inbound), keepAliveMs: KEEP_ALIVE_MS, toolNames: inbound.toolNames });
    exchange.onCancel = () => sessionless.abortExchange(exchange, new Error('the client stopped reading the response'));
    if (batch) {
      for (const message of body as unknown[]) dispatchLegacy(exchange, message, undefined, inbound.lifetime);
    } else {
      dispatchLegacy(exchange, body, inbound.rawBody, inbound.lifetime);
    }
    exchange.dispatched();
    return exchange.response;
  };

  /** A `tools/call` or `tools/list` of the per-request era on the long-lived instance; the SDK's entry when it refuses it. */
  const serveModernFast = (inbound: PostInbound, method: string): Promise<Reply | Response> => {
    const exchange = new Exchange({ batch: false, canStream: acceptsEventStream(inbound), keepAliveMs: KEEP_ALIVE_MS, toolNames: inbound.toolNames });
    exchange.onCancel = () => fastModern.abortExchange(exchange, new Error('the client stopped reading the response'));
    if (fastModern.dispatchRequest(exchange, inbound.body as JSONRPCRequest, inbound.rawBody, inbound.lifetime, MODERN_CLASSIFICATION)) {
      exchange.expect();
      exchange.dispatched();
      return exchange.response;
    }
    return modern.serve(inbound, method);
  };

  const handlePost = (inbound: PostInbound): Reply | Promise<Reply | Response> => {
    const body = inbound.body;
    if (Array.isArray(body) && body.length > MAX_BATCH) {
      return batchTooLarge(MAX_BATCH);
    }
    const classified = classificationOf(inbound);
    if (!('httpMethod' in classified)) return classified;
    const outcome = classifyPost(classified);
    switch (outcome.kind) {
      case 'reject':
        return errorReply(outcome.httpStatus, outcome.code, outcome.message, outcome.data, echoId(body));
      case 'modern-fast':
        return serveModernFast(inbound, outcome.method);
      case 'modern':
      case 'modern-entry':
        return modern.serve(inbound, outcome.kind === 'modern-entry' ? outcome.method : outcome.message.method);
      case 'legacy':
        return serveLegacy(inbound);
    }
  };

  const servePost = async (inbound: PostInbound): Promise<Reply | Response> => {
    if (closing !== undefined) return SHUTTING_DOWN;
    try {
      return await handlePost(inbound);
    } catch (error) {
      reportError(error);
      return internalError(echoId(inbound.body));
    }
  };

  const fetchFace = async (request: Request, fetchOptions: McpFetchOptions): Promise<Reply | Response> => {
    if (closing !== undefined) return SHUTTING_DOWN;
    if (request.method !== 'POST') return noSessionReply();
    const read = await readFetchPost(request, fetchOptions, maxBodyBytes);
    return 'reply' in read ? read.reply : servePost(read.inbound);
  };

  const mcp: CapnodeMcp = {
    async fetch(request, fetchOptions = {}) {
      return toResponse(await fetchFace(request, fetchOptions));
    },
    createServer: (serverOptions) => connections.createServer(serverOptions),
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
        await connections.close(reportError);
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
  return { mcp, servePost, sessionServer: (lifetimeOf, toolNames, transport) => connections.sessionServer(lifetimeOf, toolNames, transport) };
}
