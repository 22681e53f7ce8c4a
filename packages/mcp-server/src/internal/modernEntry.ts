import { createMcpHandler, type McpRequestContext, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { ToolNameStyle } from '@capnode/capabilities';
import type { AbortHook } from '@capnode/toolkit/http';
import { buildServer, requestEntry, type ServerWiring } from './buildServer.js';
import { clientNameOf } from './connectionServers.js';
import { requestClientOf } from './requestClient.js';
import { acceptsEventStream, type PostInbound } from './postInbound.js';
import type { SessionlessTransport } from './sessionlessTransport.js';
import type { CallScope } from './toolCall.js';

const MODERN_POOL_SIZE = 64;
const NOOP = (): void => {};

interface ModernRequestInfo {
  readonly lifetime: AbortHook | undefined;
  readonly canStream: boolean;
  readonly toolNames: ToolNameStyle | undefined;
}

/** A long-lived server behind a multiplexing transport, which knows each call's scope. */
export function multiplexedServer(wiring: ServerWiring, transport: SessionlessTransport, reportError: (error: unknown) => void, listChanged: boolean, boundRevision?: string): Server {
  const server = buildServer(
    wiring,
    (ctx) => {
      const call = transport.call(ctx.mcpReq.id);
      return {
        transport: 'mcp-http',
        signal: call?.signal ?? ctx.mcpReq.signal,
        canStream: call?.canStream ?? false,
        caller: clientNameOf(ctx, undefined),
        client: call?.client,
        requestId: call?.requestId ?? String(ctx.mcpReq.id),
      };
    },
    listChanged,
    boundRevision,
    (ctx) => transport.toolNamesOf(ctx.mcpReq.id),
  );
  server.connect(transport).then(() => {
    transport.deliverRequest = requestEntry(server);
  }, reportError);
  return server;
}

/** The SDK's own per-request (2026-07-28) entry, for what the fast path does not serve. */
export interface ModernEntry {
  /** Hands a per-request-era POST of `method` to the SDK's per-request entry. */
  serve(inbound: PostInbound, method: string): Promise<Response>;
  /** Tells its listeners (`subscriptions/listen`) the tool list changed. */
  toolsChanged(): void;
  close(): Promise<void>;
}

export function createModernEntry(wiring: ServerWiring, reportError: (error: unknown) => void): ModernEntry {
  const modernRequests = new WeakMap<Request, ModernRequestInfo>();
  const modernScope = (ctx: ServerContext): CallScope => {
    const request = ctx.http?.req;
    const info = request === undefined ? undefined : modernRequests.get(request);
    return {
      transport: 'mcp-http',
      signal: ctx.mcpReq.signal,
      canStream: info?.canStream ?? false,
      caller: clientNameOf(ctx, undefined),
      client: requestClientOf(info?.lifetime),
      requestId: String(ctx.mcpReq.id),
    };
  };
  // The per-request handler asks for an instance per request; idle instances are reused (an instance
  // is idle again once its single-exchange transport closed). `subscriptions/listen` is answered
  // without connecting the instance, so those requests get a fresh one that is simply dropped.
  // The request's lifetime (deadline, disconnect, shutdown) closes the instance's exchange, which
  // aborts the SDK's own per-request signal: the one signal the call runs under.
  const modernNames = (ctx: ServerContext): ToolNameStyle | undefined => {
    const request = ctx.http?.req;
    return request === undefined ? undefined : modernRequests.get(request)?.toolNames;
  };
  const modernPool: Server[] = [];
  const unpooled = new WeakSet<Request>();
  const modernFactory = (context: McpRequestContext): Server => {
    const request = context.requestInfo;
    if (request !== undefined && unpooled.has(request)) return buildServer(wiring, modernScope, true, undefined, modernNames);
    const server = modernPool.pop() ?? buildServer(wiring, modernScope, true, undefined, modernNames);
    const lifetime = request === undefined ? undefined : modernRequests.get(request)?.lifetime;
    const detach = lifetime === undefined ? NOOP : lifetime.subscribe(() => void server.close().catch(NOOP));
    server.onclose = () => {
      detach();
      if (modernPool.length < MODERN_POOL_SIZE) modernPool.push(server);
    };
    return server;
  };
  const modern = createMcpHandler(modernFactory, { legacy: 'reject', onerror: reportError });
  return {
    serve(inbound, method) {
      const listen = method === 'subscriptions/listen';
      const request = inbound.webRequest(listen);
      if (listen) unpooled.add(request);
      modernRequests.set(request, { lifetime: inbound.lifetime, canStream: acceptsEventStream(inbound), toolNames: inbound.toolNames });
      return modern.fetch(request, { parsedBody: inbound.body });
    },
    toolsChanged: () => modern.notify.toolsChanged(),
    close: () => modern.close(),
  };
}
