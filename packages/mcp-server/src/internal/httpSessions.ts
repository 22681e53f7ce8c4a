import type { ToolNameStyle } from '@capnode/capabilities';
import { WebStandardStreamableHTTPServerTransport, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { generateToken } from '../token.js';
import type { AbortHook } from '@capnode/toolkit/http';
import { LegacySseTransport } from './legacySse.js';
import { LEGACY_NOT_JSON_RPC, LEGACY_ONE_MESSAGE, SESSION_NOT_FOUND, SHUTTING_DOWN, tooManySessions, type Reply } from './jsonRpcReplies.js';

const KEEP_ALIVE_MS = 15_000;
const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** The HTTP request serving a session message or stream, as the session layer sees it. */
export interface SessionRequest extends AbortHook {
  /** Calls `listener` once when the HTTP exchange ends (answered, disconnected or destroyed). */
  onFinish(listener: () => void): void;
  /** Turns the request into a long-lived stream: it gives back its concurrency slot and drops its deadline. */
  detach(): void;
}

export interface HttpSessionsOptions {
  readonly maxSessions: number;
  readonly idleTimeoutMs: number;
  /** A session's SDK server; a call's signal also follows `lifetimeOf(ctx)`; `toolNames`: the style the opening request selected; `transport`: what its calls are recorded with. */
  readonly createServer: (lifetimeOf: (ctx: ServerContext) => AbortHook | undefined, toolNames: ToolNameStyle | undefined, transport?: 'mcp-http' | 'mcp-stdio') => Server;
  readonly onError: (error: unknown) => void;
  readonly onLog: (message: string) => void;
}

interface Session {
  readonly id: string;
  readonly kind: 'streamable' | 'legacy-sse';
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport | LegacySseTransport;
  /** POSTs being served. */
  busy: number;
  /** Open SSE streams. */
  streams: number;
  idleSince: number;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The SDK sends no response to a cancelled request (as the spec says), so that request's POST stream
 * would stay open, holding its connection and concurrency slot until the session ended. Once the
 * server has seen the cancellation, the stream is closed (the SDK's own `closeSSEStream`).
 */
function endStreamsOfCancelledRequests(transport: WebStandardStreamableHTTPServerTransport): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  transport.onmessage = (message, extra) => {
    deliver(message, extra);
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return;
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId === 'string' || typeof requestId === 'number') queueMicrotask(() => transport.closeSSEStream(requestId));
  };
}

const notFound = (): Reply => SESSION_NOT_FOUND;

/**
 * The HTTP sessions of the loopback server: Streamable HTTP sessions (2025-11-25 transport,
 * `Mcp-Session-Id`) each served by their own SDK server and the SDK's own
 * `WebStandardStreamableHTTPServerTransport`, and legacy HTTP+SSE sessions (2024-11-05) served by
 * {@link LegacySseTransport}. Every request reaches this layer only after the full gate chain.
 *
 * Bounded: at most `maxSessions` at once; a new session evicts the one idle the longest (no request
 * in flight, no open stream), and is refused with 503 when none is idle. A session idle for
 * `idleTimeoutMs` ends; an open SSE stream keeps it alive.
 */
export class HttpSessions {
  readonly #options: HttpSessionsOptions;
  readonly #sessions = new Map<string, Session>();
  /** Web requests handed to session transports, to the lifetime of the HTTP request behind each. */
  readonly #lifetimes = new WeakMap<object, AbortHook>();
  #closed = false;

  constructor(options: HttpSessionsOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Opens a Streamable HTTP session with the client's `initialize` POST; `toolNames`: the style it
   * selected, for the session's life; `transport`: what its calls are recorded with.
   */
  async initialize(webRequest: Request, body: unknown, request: SessionRequest, toolNames?: ToolNameStyle, transport: 'mcp-http' | 'mcp-stdio' = 'mcp-http'): Promise<Reply | Response> {
    const refused = this.#makeRoom();
    if (refused !== undefined) return refused;
    const id = generateToken();
    const http = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, keepAliveMs: KEEP_ALIVE_MS });
    const server = this.#options.createServer((ctx) => {
      const req = ctx.http?.req;
      return req === undefined ? undefined : this.#lifetimes.get(req);
    }, toolNames, transport);
    const session = this.#add(id, 'streamable', server, http);
    await server.connect(http);
    endStreamsOfCancelledRequests(http);
    return this.#post(session, webRequest, body, request);
  }

  /** Serves a POST, GET (standalone stream) or DELETE carrying `Mcp-Session-Id`. */
  async handle(id: string, webRequest: Request, body: unknown, request: SessionRequest): Promise<Reply | Response> {
    const session = this.#sessions.get(id);
    if (session === undefined || session.kind !== 'streamable') return notFound();
    const transport = session.transport as WebStandardStreamableHTTPServerTransport;
    if (webRequest.method === 'POST') return this.#post(session, webRequest, body, request);
    if (webRequest.method === 'GET') {
      const response = await transport.handleRequest(webRequest);
      if (response.ok && response.body !== null) this.#stream(session, request);
      return response;
    }
    return transport.handleRequest(webRequest);
  }

  /** Opens a legacy HTTP+SSE session: the response is the event stream, `endpoint` event first. */
  async openLegacy(messagePath: string, request: SessionRequest, toolNames?: ToolNameStyle): Promise<Reply> {
    const refused = this.#makeRoom();
    if (refused !== undefined) return refused;
    const id = generateToken();
    const transport = new LegacySseTransport(id, `${messagePath}?sessionId=${id}`, KEEP_ALIVE_MS);
    const server = this.#options.createServer((ctx) => transport.lifetimeOf(ctx.mcpReq.id), toolNames);
    const session = this.#add(id, 'legacy-sse', server, transport);
    await server.connect(transport);
    this.#stream(session, request);
    return { status: 200, headers: SSE_HEADERS, body: transport.stream };
  }

  /** A message POSTed to a legacy session's endpoint; answered 202 once a request's response was sent. */
  async legacyPost(id: string, body: unknown, request: SessionRequest): Promise<Reply> {
    const session = this.#sessions.get(id);
    if (session === undefined || session.kind !== 'legacy-sse') return notFound();
    if (Array.isArray(body)) return LEGACY_ONE_MESSAGE;
    this.#enter(session, request);
    try {
      await (session.transport as LegacySseTransport).deliver(body, request);
    } catch {
      return LEGACY_NOT_JSON_RPC;
    }
    return { status: 202, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Accepted' };
  }

  /** Ends every session and stream. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const sessions = [...this.#sessions.values()];
    await Promise.all(sessions.map((session) => this.#end(session, undefined)));
  }

  #post(session: Session, webRequest: Request, body: unknown, request: SessionRequest): Promise<Response> {
    this.#lifetimes.set(webRequest, request);
    this.#enter(session, request);
    return (session.transport as WebStandardStreamableHTTPServerTransport).handleRequest(webRequest, { parsedBody: body });
  }

  #add(id: string, kind: Session['kind'], server: Server, transport: Session['transport']): Session {
    const session: Session = { id, kind, server, transport, busy: 0, streams: 0, idleSince: Date.now(), idleTimer: undefined };
    this.#sessions.set(id, session);
    // The SDK server chains its own close handler after this one (DELETE, stream cancel, close()).
    const previous = transport.onclose;
    transport.onclose = () => {
      previous?.();
      this.#forget(session);
    };
    this.#armIdle(session);
    return session;
  }

  /** Refuses a new session when the cap is reached and no session is idle; else evicts the longest idle. */
  #makeRoom(): Reply | undefined {
    if (this.#closed) return SHUTTING_DOWN;
    if (this.#sessions.size < this.#options.maxSessions) return undefined;
    let oldest: Session | undefined;
    for (const session of this.#sessions.values()) {
      if (session.busy > 0 || session.streams > 0) continue;
      if (oldest === undefined || session.idleSince < oldest.idleSince) oldest = session;
    }
    if (oldest === undefined) {
      return tooManySessions(this.#options.maxSessions);
    }
    void this.#end(oldest, 'evicted to make room for a new session');
    return undefined;
  }

  #enter(session: Session, request: SessionRequest): void {
    session.busy += 1;
    this.#disarmIdle(session);
    request.onFinish(() => {
      session.busy -= 1;
      this.#armIdle(session);
    });
  }

  #stream(session: Session, request: SessionRequest): void {
    request.detach();
    session.streams += 1;
    this.#disarmIdle(session);
    request.onFinish(() => {
      session.streams -= 1;
      this.#armIdle(session);
    });
  }

  #armIdle(session: Session): void {
    if (session.busy > 0 || session.streams > 0 || this.#closed || !this.#sessions.has(session.id)) return;
    session.idleSince = Date.now();
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => void this.#end(session, `idle for ${this.#options.idleTimeoutMs} ms`), this.#options.idleTimeoutMs);
    session.idleTimer.unref();
  }

  #disarmIdle(session: Session): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
  }

  #forget(session: Session): void {
    this.#disarmIdle(session);
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
  }

  async #end(session: Session, why: string | undefined): Promise<void> {
    this.#forget(session);
    if (why !== undefined) this.#options.onLog(`session ended: ${why}`);
    try {
      await session.server.close();
    } catch (error) {
      this.#options.onError(error);
    }
    try {
      await session.transport.close();
    } catch (error) {
      this.#options.onError(error);
    }
  }
}
