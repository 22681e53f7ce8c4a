import { createServer, type IncomingMessage } from 'node:http';
import type { Invoker, ToolNameStyle } from '@capnode/capabilities';
import { createHttpKernel, listenOn, originOf, readBody, signalFromHook, textReply, type KernelRequest } from '@capnode/toolkit/http';
import { isLoopbackHost, isLoopbackHostHeader, type LogLevel } from '@capnode/toolkit';
import { STDIO_RELAY_HEADER } from '@capnode/protocol';
import { isJsonContentType } from '@modelcontextprotocol/server';
import { browserHeader, canonicalPath, createBearerCheck, createBearerTable } from './internal/gates.js';
import { tagRequestClient } from './internal/requestClient.js';
import { createMcpCore, type McpCore, type PostInbound } from './internal/mcpCore.js';
import { BAD_TARGET, BODY_UNREADABLE, PARSE_ERROR, REQUEST_TIMEOUT, UNSUPPORTED_MEDIA_TYPE, internalError, payloadTooLarge, type Reply } from './internal/jsonRpcReplies.js';
import { createRouteListener } from './internal/routes.js';
import { HttpSessions } from './internal/httpSessions.js';
import { TOOL_NAMES_HEADER, selectedToolNames } from './internal/toolNameSelection.js';

/** Severity of a server log line. */
/** Severity of the server's log lines: the toolkit's one {@link LogLevel}. */
export type HttpLogLevel = LogLevel;

/** Host-provided handler for `/_capnode/*` paths (approvals and other local administration). */
export interface AdminHandler {
  /** Bearer token required on admin paths (checked instead of the MCP token). */
  readonly token: string;
  handle(request: Request): Promise<Response>;
}

/** A bearer token the MCP listener accepts, and the client name its calls are attributed to (audit, approvals). */
export interface NamedToken {
  readonly name: string;
  readonly token: string;
}

export interface HttpServerOptions {
  readonly invoker: Invoker;
  /** Loopback address or `localhost` to listen on; anything else throws. Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 8765; 0 picks a free port. */
  readonly port?: number;
  /**
   * The bearer token every request must carry: one token (its calls are attributed to `default`), or
   * several named ones (each call carries the name of the token it came with as its invocation's
   * `client`). Only an explicit `{ disabled: true }` turns auth off.
   */
  readonly token: string | readonly NamedToken[] | { readonly disabled: true };
  /**
   * Called with the token's name on each request that authenticated with a named token (e.g. to keep a
   * "last used" time); must be cheap, it runs on every request. A throw is ignored.
   */
  readonly onTokenUsed?: (name: string) => void;
  /**
   * Text of a 401 answer (a missing or wrong token): what the user should do to get the right one.
   * Default: a sentence naming the `Authorization: Bearer <token>` header.
   */
  readonly unauthorizedText?: string;
  /** Requests served at once; more wait up to 50 ms for a slot, then get 503 + Retry-After. Default 16. */
  readonly maxConcurrency?: number;
  /** Largest accepted body, on Content-Length and while reading. Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /** Deadline over body read and dispatch; past it the request gets 408 and frees its slot. Default 6 min. */
  readonly requestTimeoutMs?: number;
  /** How long `close()` waits for in-flight requests before aborting their calls. Default 5000. */
  readonly drainTimeoutMs?: number;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** Optional `instructions` sent to MCP clients. */
  readonly instructions?: string;
  /**
   * How `tools/list` spells command names for a request that selects none: `dotted` (default) or
   * `underscore` (`.` → `_`). A request selects with `?toolNames=dotted|underscore` on the URL or a
   * `Capnode-Tool-Names` header (another value: 400); a session keeps what its opening request
   * selected. `tools/call` accepts both spellings.
   */
  readonly toolNames?: ToolNameStyle;
  /** Experimental capabilities declared on initialize, e.g. capnode's host marker `{ 'capnode/host': { instance } }`. */
  readonly experimentalCapabilities?: Readonly<Record<string, Record<string, unknown>>>;
  /** Serves `/_capnode/*` behind the same gates, with its own bearer token. */
  readonly admin?: AdminHandler;
  /**
   * HTTP sessions served at once: Streamable HTTP sessions (an `initialize` POST that accepts
   * `text/event-stream` gets an `Mcp-Session-Id`) and legacy HTTP+SSE sessions (`GET /sse`). At the cap
   * a new session evicts the one idle the longest, or is refused with 503 when none is idle. 0 serves
   * sessionless requests only. Default 64.
   */
  readonly maxSessions?: number;
  /** A session with no request in flight and no open SSE stream for this long ends. Default 30 min. */
  readonly sessionIdleTimeoutMs?: number;
  readonly onLog?: (level: HttpLogLevel, message: string) => void;
}

/** A running loopback MCP server. */
export interface McpHttpServer {
  /** Endpoint URL, e.g. `http://127.0.0.1:8765/`. */
  readonly url: string;
  readonly port: number;
  /** Requests currently holding a concurrency slot (open SSE streams hold none). */
  readonly inFlight: number;
  /** HTTP sessions currently open (Streamable HTTP and legacy SSE). */
  readonly sessions: number;
  /**
   * Replaces the MCP bearer token: from the next request on only `token` is accepted (token rotation
   * without a restart, so in-flight calls survive). Throws when authentication was disabled.
   */
  setToken(token: string): void;
  /**
   * Replaces every accepted token with `tokens` (names kept for attribution): from the next request
   * on, a token not in the list gets 401 (revocation without a restart). Throws when authentication
   * was disabled or the list is empty.
   */
  setTokens(tokens: readonly NamedToken[]): void;
  /** Stops accepting, drains in-flight requests (up to `drainTimeoutMs`), aborts the rest. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8765,
  maxConcurrency: 16,
  maxBodyBytes: 4 * 1024 * 1024,
  requestTimeoutMs: 6 * 60_000,
  drainTimeoutMs: 5000,
  admissionWaitMs: 50,
  maxSessions: 64,
  sessionIdleTimeoutMs: 30 * 60_000,
} as const;

/** Where a legacy HTTP+SSE client (2024-11-05) opens its stream, and where it posts its messages. */
const LEGACY_SSE_PATH = '/sse';
const LEGACY_MESSAGE_PATH = '/message';

const PROBE_TEXT = 'capnode MCP server: send JSON-RPC with POST to this URL (Content-Type: application/json).\n';
const ADMIN_ROOT = '/_capnode';
const ADMIN_PREFIX = '/_capnode/';
/** What the kernel itself answers on the MCP listener. */
const KERNEL_REPLIES = {
  forbiddenPeer: textReply(403, 'Forbidden: only loopback peers are served.\n'),
  shuttingDown: textReply(503, 'The server is shutting down.\n', { 'retry-after': '1', connection: 'close' }),
  busy: textReply(503, 'Busy: too many requests in flight; retry shortly.\n', { 'retry-after': '1' }),
  timeout: REQUEST_TIMEOUT,
  internal: internalError(),
} as const;
const DEFAULT_UNAUTHORIZED_TEXT = 'Unauthorized: send this server\'s current token as `Authorization: Bearer <token>`.';

/** The 401 answer: the Bearer challenge and a plain-text line saying how to get in. */
function unauthorizedReply(text: string): Reply {
  return textReply(401, `${text}\n`, { 'www-authenticate': 'Bearer realm="capnode"' });
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A minimal web `Request` view over a Node request for the SDK's per-request entry, which reads only
 * `method`, `url` and `headers.get` on the serving path (the body is handed over parsed). It has no
 * `signal`: the request's lifetime reaches the SDK by closing the exchange instead.
 */
function requestView(incoming: IncomingMessage, origin: string): Request {
  const headers = incoming.headers;
  const view = {
    method: incoming.method ?? 'POST',
    url: origin + (incoming.url ?? '/'),
    headers: {
      get: (name: string): string | null => headerText(headers[name.toLowerCase()]) ?? null,
      has: (name: string): boolean => headers[name.toLowerCase()] !== undefined,
    },
    signal: undefined,
  };
  return view as unknown as Request;
}

/** A parsed POST read off Node's request (a class: no closures per request). */
class NodePost implements PostInbound {
  readonly body: unknown;
  readonly rawBody: string;
  readonly toolNames: ToolNameStyle | undefined;
  readonly lifetime: KernelRequest;
  readonly #incoming: IncomingMessage;
  readonly #origin: string;

  constructor(incoming: IncomingMessage, request: KernelRequest, origin: string, body: unknown, rawBody: string, toolNames: ToolNameStyle | undefined) {
    this.body = body;
    this.rawBody = rawBody;
    this.toolNames = toolNames;
    this.lifetime = request;
    this.#incoming = incoming;
    this.#origin = origin;
  }

  header(name: string): string | undefined {
    return headerText(this.#incoming.headers[name]);
  }

  webRequest(withSignal: boolean): Request {
    const incoming = this.#incoming;
    if (!withSignal) return requestView(incoming, this.#origin);
    return new Request(this.#origin + (incoming.url ?? '/'), { method: 'POST', headers: webHeaders(incoming), signal: signalFromHook(this.lifetime) });
  }
}

function webHeaders(incoming: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined && name !== 'content-length' && name !== 'transfer-encoding') headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/** The server's options with defaults applied, each validated (a bad value throws before anything listens). */
function settleOptions(options: HttpServerOptions) {
  const host = options.host ?? DEFAULTS.host;
  if (!isLoopbackHost(host)) throw new RangeError(`host must be a loopback address or localhost, got ${JSON.stringify(host)}`);
  const port = options.port ?? DEFAULTS.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`port must be an integer in 0..65535, got ${port}`);
  if (typeof options.token === 'string' ? options.token.length === 0 : Array.isArray(options.token) ? !validTokens(options.token) : (options.token as { disabled?: unknown } | undefined)?.disabled !== true) {
    throw new TypeError('token must be a non-empty string, a non-empty list of { name, token } with non-empty strings, or { disabled: true } to switch authentication off explicitly');
  }
  const maxConcurrency = positive('maxConcurrency', options.maxConcurrency ?? DEFAULTS.maxConcurrency);
  const maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes ?? DEFAULTS.maxBodyBytes);
  const requestTimeoutMs = positive('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
  const drainTimeoutMs = nonNegative('drainTimeoutMs', options.drainTimeoutMs ?? DEFAULTS.drainTimeoutMs);
  const maxSessions = options.maxSessions ?? DEFAULTS.maxSessions;
  if (!Number.isInteger(maxSessions) || maxSessions < 0) throw new RangeError(`maxSessions must be an integer >= 0, got ${maxSessions}`);
  const sessionIdleTimeoutMs = positive('sessionIdleTimeoutMs', options.sessionIdleTimeoutMs ?? DEFAULTS.sessionIdleTimeoutMs);
  return { host, port, maxConcurrency, maxBodyBytes, requestTimeoutMs, drainTimeoutMs, maxSessions, sessionIdleTimeoutMs };
}

/** `onLog` behind a guard: a failing logger must not break serving. */
function guardedLogger(onLog: HttpServerOptions['onLog']): (level: HttpLogLevel, message: string) => void {
  return (level, message) => {
    try {
      onLog?.(level, message);
    } catch {
      // A failing logger must not break serving.
    }
  };
}

/**
 * Starts the hardened loopback MCP server on `node:http`.
 *
 * Every request passes these gates in order: non-loopback peer → 403; a request target that is not a
 * canonical origin-form path (see `canonicalPath`: absolute-form, `*`, `%` escapes, backslashes, empty
 * or dot segments) → 400, so gating and routing see one path; concurrency cap → 503 with
 * Retry-After; any Origin, Referer or browser fetch-metadata header (a lone `Sec-Fetch-Mode: cors`,
 * which Node's fetch sends, excepted) → 403; Host other than
 * 127.0.0.1 / localhost / [::1] (any port) or missing → 403; bearer token → 401 with a one-line text (`unauthorizedText`), before
 * any method dispatch; `GET` → 200 text probe; verbs other than GET/POST/DELETE → 405; Content-Type
 * not `application/json` → 415; body over the limit → 413; past the deadline → 408. No
 * Access-Control-* header is ever sent, so a browser's CORS preflight always fails.
 *
 * The gates and the MCP POST (body read, parse, SDK dispatch) run on Node's own request and response
 * objects — the hot path builds no web `Request` or `Response` (the SDK's per-request entry gets a
 * minimal view). Everything else (probe, admin routes, DELETE, 405) is routed by Hono through
 * `@hono/node-server`.
 *
 * @example
 * const { token } = await loadOrCreateToken(tokenPath);
 * await using server = await startHttpServer({ invoker, token });
 * console.log(`MCP endpoint ${server.url}`);
 */
export async function startHttpServer(options: HttpServerOptions & { readonly signal?: AbortSignal }): Promise<McpHttpServer> {
  const { host, port, maxConcurrency, maxBodyBytes, requestTimeoutMs, drainTimeoutMs, maxSessions, sessionIdleTimeoutMs } = settleOptions(options);
  options.signal?.throwIfAborted();

  const log = guardedLogger(options.onLog);
  const core = createMcpCore({
    invoker: options.invoker,
    maxBodyBytes,
    onError: (error) => log('error', `mcp: ${error.message}`),
    ...announcedOf(options),
    ...(options.toolNames === undefined ? {} : { toolNames: options.toolNames }),
  });
  const auth = createAuthGate(options);
  const admin = options.admin;
  const sessions = maxSessions === 0 ? undefined : createSessions(maxSessions, sessionIdleTimeoutMs, core, log);
  let origin = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}`;

  const servePost = async (incoming: IncomingMessage, request: KernelRequest, path: string): Promise<Reply | Response> => {
    const read = await readBody(incoming, maxBodyBytes);
    if (read.kind === 'too-large') return payloadTooLarge(maxBodyBytes);
    if (read.kind === 'aborted') return BODY_UNREADABLE;
    let body: unknown;
    try {
      body = JSON.parse(read.text);
    } catch {
      return PARSE_ERROR;
    }
    const headers = incoming.headers;
    const selected = selectedToolNames(incoming.url, headerText(headers[TOOL_NAMES_HEADER]));
    if ('reply' in selected) return selected.reply;
    const { toolNames } = selected;
    if (sessions !== undefined) {
      const sessionId = headerText(headers['mcp-session-id']);
      if (sessionId !== undefined) return sessions.handle(sessionId, requestView(incoming, origin), body, request);
      if (path === LEGACY_MESSAGE_PATH) {
        const legacyId = queryParam(incoming.url, 'sessionId');
        if (legacyId !== undefined) return sessions.legacyPost(legacyId, body, request);
      }
      if (isInitializeMessage(body) && acceptsEventStream(headers.accept)) {
        // Only a holder of the admin token (`capnode mcp` relaying its stdio client) may say the session's calls come over stdio.
        const relayed = auth.admits(headerText(headers[STDIO_RELAY_HEADER]), true, request);
        return sessions.initialize(requestView(incoming, origin), body, request, toolNames, relayed ? 'mcp-stdio' : 'mcp-http');
      }
    }
    // `return await`: an async function returning a promise as is waits two more turns to adopt it.
    return await core.servePost(new NodePost(incoming, request, origin, body, read.text, toolNames));
  };

  const routes = createRouteListener({
    admin: admin === undefined ? undefined : (request) => admin.handle(request),
    maxBodyBytes,
    probeText: PROBE_TEXT,
    sessions: sessions !== undefined,
    onError: (error) => log('error', `http: unhandled ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`),
  });

  /**
   * Gates after admission, then routing, both on `path` (the canonical target path); `request` aborts
   * the calls this request started.
   */
  const unauthorized = unauthorizedReply(options.unauthorizedText ?? DEFAULT_UNAUTHORIZED_TEXT);
  const dispatch = (incoming: IncomingMessage, request: KernelRequest, path: string): Reply | Promise<Reply | Response | void> => {
    const headers = incoming.headers;
    const browser = browserHeader(headers);
    if (browser !== undefined) return textReply(403, `Forbidden: requests carrying ${browser} are refused (browser requests are not served).\n`);
    if (!isLoopbackHostHeader(headers.host)) return textReply(403, 'Forbidden: the Host header must be 127.0.0.1, localhost or [::1].\n');
    const isAdmin = path === ADMIN_ROOT || path.startsWith(ADMIN_PREFIX);
    if (!auth.admits(headers.authorization, isAdmin, request)) return unauthorized;
    if (incoming.method === 'POST' && !isAdmin) {
      return isJsonContentType(headers['content-type']) ? servePost(incoming, request, path) : UNSUPPORTED_MEDIA_TYPE;
    }
    if (sessions !== undefined && !isAdmin) {
      const sessionId = headerText(headers['mcp-session-id']);
      const method = incoming.method;
      if (sessionId !== undefined && (method === 'DELETE' || (method === 'GET' && acceptsEventStream(headers.accept)))) {
        return sessions.handle(sessionId, requestView(incoming, origin), undefined, request);
      }
      if (method === 'GET' && path === LEGACY_SSE_PATH && acceptsEventStream(headers.accept)) {
        const selected = selectedToolNames(incoming.url, headerText(headers[TOOL_NAMES_HEADER]));
        return 'reply' in selected ? selected.reply : sessions.openLegacy(LEGACY_MESSAGE_PATH, request, selected.toolNames);
      }
    }
    // Everything but the MCP POST: Hono answers it and writes the response itself.
    request.answered = true;
    return isAdmin ? routes.admin(incoming, request.outgoing) : routes.surface(incoming, request.outgoing);
  };

  const kernel = createHttpKernel<string>({
    maxConcurrency,
    admissionWaitMs: DEFAULTS.admissionWaitMs,
    requestTimeoutMs,
    // The canonical target path, so gating and routing see one path.
    admit: (incoming) => {
      const path = canonicalPath(incoming.url);
      return path === undefined ? { refuse: BAD_TARGET } : { route: path };
    },
    handle: dispatch,
    replies: KERNEL_REPLIES,
    onLog: log,
  });

  // Node would answer a missing Host with 400 itself; the Host gate answers it with 403 in its place in the order.
  const server = createServer({ requestTimeout: 0, requireHostHeader: false }, kernel.listener);

  const address = await listenOn(server, port, host);
  origin = originOf(address);
  const url = `${origin}/`;
  log('info', `listening on ${url}`);

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      // Admitted requests finish within `drainTimeoutMs` (then are aborted, with a grace); then the
      // sessions close, what is left is aborted, every connection dropped, and the MCP core closed.
      await kernel.drain(server, { drainTimeoutMs, ...(sessions === undefined ? {} : { beforeCut: () => sessions.close() }) });
      await core.mcp.close();
      options.signal?.removeEventListener('abort', onSignal);
      log('info', 'closed');
    })();
    return closed;
  };
  const onSignal = (): void => void close();
  options.signal?.addEventListener('abort', onSignal, { once: true });

  return {
    url,
    port: address.port,
    get inFlight() {
      return kernel.active;
    },
    get sessions() {
      return sessions?.size ?? 0;
    },
    setToken: (token) => auth.setToken(token),
    setTokens: (tokens) => auth.setTokens(tokens),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The name calls made with a single `token` string are attributed to. */
const DEFAULT_TOKEN_NAME = 'default';

function validTokens(tokens: readonly NamedToken[]): boolean {
  return tokens.length > 0 && tokens.every((entry) => typeof entry?.name === 'string' && entry.name.length > 0 && typeof entry.token === 'string' && entry.token.length > 0);
}

/** The lookup of the `token` option: the authenticated token's name, or `undefined` when auth is off. */
function tokenLookup(token: HttpServerOptions['token']): ((authorization: string | undefined) => string | undefined) | undefined {
  if (typeof token === 'string') return createBearerTable([{ name: DEFAULT_TOKEN_NAME, token }]);
  if (Array.isArray(token)) return createBearerTable(token as readonly NamedToken[]);
  return undefined;
}

/**
 * The bearer gate: the admin token on admin paths, else the named MCP tokens (the request is tagged
 * with the matching token's name and `onTokenUsed` told), replaceable without a restart.
 */
function createAuthGate(options: HttpServerOptions) {
  let checkToken = tokenLookup(options.token);
  const onTokenUsed = options.onTokenUsed;
  const checkAdmin = options.admin === undefined ? undefined : createBearerCheck(options.admin.token);
  return {
    admits(authorization: string | undefined, isAdmin: boolean, request: object): boolean {
      if (isAdmin) return checkAdmin !== undefined && checkAdmin(authorization);
      if (checkToken === undefined) return true;
      const client = checkToken(authorization);
      if (client === undefined) return false;
      tagRequestClient(request, client);
      if (onTokenUsed !== undefined) reportTokenUse(onTokenUsed, client);
      return true;
    },
    setToken(token: string): void {
      if (checkToken === undefined) throw new TypeError('authentication is disabled on this server; there is no token to replace');
      if (typeof token !== 'string' || token.length === 0) throw new TypeError('token must be a non-empty string');
      checkToken = createBearerTable([{ name: DEFAULT_TOKEN_NAME, token }]);
    },
    setTokens(tokens: readonly NamedToken[]): void {
      if (checkToken === undefined) throw new TypeError('authentication is disabled on this server; there are no tokens to replace');
      if (!Array.isArray(tokens) || !validTokens(tokens)) throw new TypeError('tokens must be a non-empty list of { name, token } with non-empty strings');
      checkToken = createBearerTable(tokens);
    },
  };
}

function reportTokenUse(onTokenUsed: (name: string) => void, name: string): void {
  try {
    onTokenUsed(name);
  } catch {
    // A failing hook must not break serving.
  }
}

/** What the server announces on initialize: server info, instructions, experimental capabilities (when given). */
function announcedOf(options: HttpServerOptions): Pick<HttpServerOptions, 'serverInfo' | 'instructions' | 'experimentalCapabilities'> {
  return {
    ...(options.serverInfo === undefined ? {} : { serverInfo: options.serverInfo }),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    ...(options.experimentalCapabilities === undefined ? {} : { experimentalCapabilities: options.experimentalCapabilities }),
  };
}

/** The HTTP sessions (Streamable HTTP, legacy SSE), each served by its own SDK server of `core`. */
function createSessions(maxSessions: number, idleTimeoutMs: number, core: McpCore, log: (level: 'error' | 'info', message: string) => void): HttpSessions {
  return new HttpSessions({
    maxSessions,
    idleTimeoutMs,
    createServer: (lifetimeOf, toolNames, transport) => core.sessionServer(lifetimeOf, toolNames, transport),
    onError: (error) => log('error', `mcp session: ${error instanceof Error ? error.message : String(error)}`),
    onLog: (message) => log('info', message),
  });
}

/** A cheap look at the method only: the SDK validates the message itself. */
function isInitializeMessage(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
}

function acceptsEventStream(accept: string | undefined): boolean {
  return accept?.includes('text/event-stream') ?? false;
}

/** One query parameter of a request target (the gates never examine the query). */
function queryParam(target: string | undefined, name: string): string | undefined {
  const start = target?.indexOf('?') ?? -1;
  if (target === undefined || start < 0) return undefined;
  return new URLSearchParams(target.slice(start + 1)).get(name) ?? undefined;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a number >= 0, got ${value}`);
  return value;
}
