import type { ClientConnection, ClientEvent, ToolNameStyle } from '@capnode/capabilities';
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { CreateServerOptions } from '../capnodeMcp.js';
import { AbortLatch, type AbortHook } from '@capnode/toolkit/http';
import { buildServer, type ServerWiring } from './buildServer.js';
import { envelopeClientName, type CallScope } from './toolCall.js';
import { requestClientOf } from './requestClient.js';

const NOOP = (): void => {};

/** The calling client's name: the request's client-info `_meta`, else what the connection's client declared. */
export function clientNameOf(ctx: ServerContext, server: Server | undefined): string | undefined {
  const fromEnvelope = envelopeClientName(ctx.mcpReq.envelope as Record<string, unknown> | undefined);
  if (fromEnvelope !== undefined) return fromEnvelope;
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

/** The MCP notification method of a client event: `notifications/capnode/<type>` (e.g. `notifications/capnode/shell_completed`). */
export function clientEventMethod(type: ClientEvent['type']): string {
  return `notifications/capnode/${type}`;
}

/** Connections made in this process; numbers them, so ids stay unique for the host's life. */
let connectionCount = 0;

/**
 * The connection seam of one connection's server: events become `notifications/capnode/<type>`
 * notifications with the event's other fields as params, sent while the connection is open.
 */
function connectionOf(server: () => Server | undefined): ClientConnection {
  connectionCount += 1;
  return {
    id: `mcp-${connectionCount}`,
    notify(event) {
      const instance = server();
      if (instance?.transport === undefined || instance.getNegotiatedProtocolVersion() === undefined) return;
      const { type, ...params } = event;
      instance.notification({ method: clientEventMethod(type), params }).catch(NOOP);
    },
  };
}

/** The per-connection servers (stdio, one HTTP session), tracked until they close. */
export interface ConnectionServers {
  /** See `CapnodeMcp.createServer`. */
  createServer(options?: CreateServerOptions): Server;
  /** See `McpCore.sessionServer`. */
  sessionServer(lifetimeOf: (ctx: ServerContext) => AbortHook | undefined, toolNames?: ToolNameStyle, transport?: CallScope['transport']): Server;
  /** Sends `notifications/tools/list_changed` to every connection that finished initializing. */
  toolsChanged(): void;
  /** Closes every connection's server. */
  close(reportError: (error: unknown) => void): Promise<void>;
}

export function createConnectionServers(wiring: ServerWiring): ConnectionServers {
  const sessions = new Set<Server>();
  /**
   * A per-connection server whose calls may stream and ask through the client's elicitation;
   * `signalOf` gives each call's abort signal; `toolNames` is the connection's name style (the
   * server's default when absent). Tracked in `sessions` until it closes.
   */
  const connectionServer = (
    transport: CallScope['transport'],
    signalOf: (ctx: ServerContext) => CallScope['signal'],
    toolNames: ToolNameStyle | undefined,
    clientOf: (ctx: ServerContext) => string | undefined = () => undefined,
  ): Server => {
    let server: Server | undefined;
    const connection = connectionOf(() => server);
    const scopeOf = (ctx: ServerContext): CallScope => ({
      transport,
      signal: signalOf(ctx),
      canStream: true,
      caller: clientNameOf(ctx, server),
      client: clientOf(ctx),
      requestId: String(ctx.mcpReq.id),
      // A connection carries server-to-client requests on the call's own stream.
      canElicit: canElicitForm(server),
      connection,
    });
    server = buildServer(wiring, scopeOf, true, undefined, toolNames === undefined ? undefined : () => toolNames);
    const instance = server;
    sessions.add(instance);
    instance.onclose = () => {
      sessions.delete(instance);
    };
    return instance;
  };
  return {
    createServer: (serverOptions = {}) => connectionServer(serverOptions.transport ?? 'mcp-stdio', (ctx) => ctx.mcpReq.signal, serverOptions.toolNames),
    sessionServer: (lifetimeOf, toolNames, transport = 'mcp-http') =>
      connectionServer(
        transport,
        (ctx) => callSignal(ctx.mcpReq.signal, lifetimeOf(ctx)),
        toolNames,
        (ctx) => requestClientOf(lifetimeOf(ctx)),
      ),
    toolsChanged() {
      for (const server of sessions) {
        if (server.transport === undefined || server.getNegotiatedProtocolVersion() === undefined) continue;
        server.sendToolListChanged().catch(NOOP);
      }
    },
    async close(reportError) {
      await Promise.all([...sessions].map((server) => server.close().catch(reportError)));
      sessions.clear();
    },
  };
}
