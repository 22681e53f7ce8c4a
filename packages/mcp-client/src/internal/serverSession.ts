import { CapabilityError } from '@capnode/capabilities';
import { Client, SdkError, SdkErrorCode, type Implementation } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../config.js';
import { isMcpClientError, McpClientError, type McpClientErrorCode } from '../errors.js';
import { hostInstanceOf, selfEntryReason, type SelfHostIdentity } from '../selfHost.js';
import { capText } from '../redact.js';
import type { Logger, McpConnection, McpConnector, McpRuntimeEvent, ServerDiagnostic, ServerState } from '../types.js';
import { createDeadline, waitFor } from '@capnode/toolkit';
import { limiterFor, type CallLimiter } from './callLimiter.js';
import { CONTENT_LIMITS, safeJson } from './contentLimits.js';
import { routeProgress } from './progress.js';
import { clientCapabilities, installServerRequests, type ServerRequestHooks } from './serverRequests.js';
import { CallsInFlight } from './callsInFlight.js';
import { SessionTools } from './sessionTools.js';
import type { ListedTool } from './toolListing.js';
import { errorText } from './util.js';

const PAUSE_AFTER_FAILURES = 3;
const PAUSE_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;

function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.max(0, attempt - 1));
}

/** The refusal of a server that is the runtime's own capnode host. */
function selfImportError(name: string, reason: string): McpClientError {
  return new McpClientError('self_host', `${reason}, so it is this capnode host itself; capnode never imports its own tools (they would loop back). Remove it: capnode servers remove ${name}`);
}

/** What a session needs from the pool that owns it. */
export interface SessionHost {
  readonly connector: McpConnector;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
  readonly clientInfo: Implementation;
  /** The host instance the runtime runs in; a server declaring it is refused (`self_host`). */
  readonly hostInstance?: string | undefined;
  /** Recognises the host's own entry before connecting. */
  readonly hostIdentity?: SelfHostIdentity | undefined;
  describe(error: unknown): string;
  closedError(): Error;
  toolsChanged(session: ServerSession): void;
  catalogChanged(session: ServerSession): void;
  track(promise: Promise<unknown>): void;
  /** Answers to server-initiated requests; decide the capabilities each client declares. */
  readonly requestHooks: ServerRequestHooks;
  emit(event: McpRuntimeEvent): void;
}

/** One granted server: its connection, backoff, pause, recycling, tool listing and close. */
export class ServerSession {
  readonly server: McpServerConfig;
  connection: McpConnection | undefined;
  /** Capabilities the server declared at its last successful connect. */
  capabilities: { resources: boolean; prompts: boolean } = { resources: false, prompts: false };
  state: ServerState = 'connecting';
  /** The tool list: the last good listing, refreshed in the background. */
  readonly toolList: SessionTools;
  /** The per-server concurrency cap (`max_concurrent_calls`, `parallel_calls`), if any. */
  readonly limiter: CallLimiter | undefined;
  /** Problems reading `pinned_resources` at start. */
  readonly pinnedWarnings: string[] = [];
  lastError: string | undefined;
  lastErrorCode: McpClientErrorCode | undefined;
  connectMs: number | undefined;
  failures = 0;
  lastFailureTimedOut = false;
  pausedUntil = 0;
  attempt = 0;
  nextConnectAt = 0;
  readonly abort = new AbortController();
  #connecting: Promise<McpConnection> | undefined;
  /** When the connect attempt under way must be done (first listing included), `performance.now()` time. */
  #connectDeadline = 0;
  /** Calls in flight and the time of the last activity, for `idle_timeout_secs`. */
  #active = 0;
  #lastActivity = 0;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Rejecters of the calls in flight, failed at once when the session closes. */
  readonly #calls = new Set<(error: Error) => void>();
  #lastTransportError: string | undefined;
  readonly #host: SessionHost;
  /** The elicitors of the calls in flight, for the server's elicitation requests. */
  readonly calls = new CallsInFlight();
  #pausedReported = false;
  /** Set once the server turned out to be the runtime's own host: every later connect fails with it at once. */
  #refused: McpClientError | undefined;
  /** `resources/list` and `prompts/list` answers (first page), until the server says they changed or reconnects. */
  readonly listCache = new Map<string, unknown>();
  /** Bumped whenever cached lists are dropped, so a listing under way then is not kept. */
  listEpoch = 0;

  constructor(server: McpServerConfig, host: SessionHost) {
    this.server = server;
    this.#host = host;
    this.limiter = limiterFor(server);
    const selfReason = host.hostIdentity === undefined ? undefined : selfEntryReason(server as unknown as Readonly<Record<string, unknown>>, host.hostIdentity);
    if (selfReason !== undefined) {
      this.#refused = selfImportError(server.name, selfReason);
      this.state = 'failed';
      this.lastError = this.#refused.message;
      this.lastErrorCode = 'self_host';
      host.logger.warn(`mcp server '${server.name}' refused: ${this.#refused.message}`);
    }
    this.toolList = new SessionTools({
      server: server.name,
      logger: host.logger,
      client: () => (this.state === 'connected' ? this.connection?.client : undefined),
      signal: this.abort.signal,
      describe: (error) => host.describe(error),
      changed: () => host.catalogChanged(this),
      diagnostic: (level, message) => this.report(level, message),
    });
  }

  /** Emits a diagnostic event for this server. */
  report(level: 'warning' | 'error', message: string): void {
    this.#host.emit({ type: 'diagnostic', server: this.server.name, level, message });
  }

  /** Changes the state and emits `server-state` when it differs. */
  #setState(state: ServerState): void {
    const previous = this.state;
    this.state = state;
    if (previous === state) return;
    const failed = state === 'failed' || state === 'disconnected';
    this.#host.emit({
      type: 'server-state',
      server: this.server.name,
      state,
      previous,
      ...(failed && this.lastError !== undefined ? { error: this.lastError, ...(this.lastErrorCode === undefined ? {} : { errorCode: this.lastErrorCode }) } : {}),
    });
  }

  get tools(): readonly ListedTool[] {
    return this.toolList.tools;
  }

  get toolsStale(): boolean {
    return this.toolList.stale;
  }

  /**
   * Milliseconds start-up work (the first listing, pinned resources) may still take: what is left of
   * the connect timeout, at least 1 s. So a server's start-up takes about one connect timeout
   * whatever the server does.
   */
  startBudgetMs(): number {
    const whole = this.server.connectTimeoutMs;
    return Math.max(Math.min(this.#connectDeadline - performance.now(), whole), 1_000);
  }

  get closed(): boolean {
    return this.abort.signal.aborted;
  }

  diagnostic(): ServerDiagnostic {
    const paused = this.pausedUntil > Date.now();
    const info = this.connection?.client.getServerVersion();
    return {
      server: this.server.name,
      transport: this.connection?.transport ?? this.server.transport,
      state: this.closed ? 'closed' : paused ? 'paused' : this.state,
      toolCount: this.tools.length,
      warnings: [...this.toolList.warnings, ...this.pinnedWarnings],
      ...(this.toolList.listError === undefined ? {} : { listError: this.toolList.listError }),
      ...(this.connectMs === undefined ? {} : { connectMs: Math.round(this.connectMs) }),
      ...(this.lastError === undefined ? {} : { error: this.lastError }),
      ...(this.lastError === undefined || this.lastErrorCode === undefined ? {} : { errorCode: this.lastErrorCode }),
      ...(paused ? { pausedUntil: new Date(this.pausedUntil).toISOString() } : {}),
      ...(info ? { serverInfo: { name: capText(String(info.name), 100), version: capText(String(info.version), 50) } } : {}),
    };
  }

  /** Connects unless connected; concurrent callers share one attempt; honours the reconnect backoff. */
  ensureConnected(signal?: AbortSignal): Promise<McpConnection> {
    if (this.closed) return Promise.reject(this.#host.closedError());
    if (this.#refused) return Promise.reject(new CapabilityError('failed', `MCP server '${this.server.name}' is not available: ${this.#refused.message}`, { cause: this.#refused }));
    this.#lastActivity = performance.now();
    if (this.connection && this.state === 'connected') return Promise.resolve(this.connection);
    if (!this.#connecting) {
      const wait = this.nextConnectAt - Date.now();
      if (wait > 0) {
        return Promise.reject(
          new CapabilityError(
            'failed',
            `MCP server '${this.server.name}' is not connected${this.lastError ? ` (${this.lastError})` : ''}; next connection attempt after ${new Date(this.nextConnectAt).toISOString()}.`,
          ),
        );
      }
      this.#connecting = this.#connect().finally(() => {
        this.#connecting = undefined;
      });
    }
    return signal ? waitFor(this.#connecting, { signal }) : this.#connecting;
  }

  async #connect(): Promise<McpConnection> {
    const server = this.server;
    const timeoutMs = server.connectTimeoutMs;
    const deadline = createDeadline({ timeoutMs, signal: this.abort.signal });
    const signal = deadline.signal;
    const started = performance.now();
    this.#connectDeadline = started + timeoutMs;
    this.#setState(this.attempt === 0 ? 'connecting' : this.state);
    this.#lastTransportError = undefined;
    const attempt = this.#host.connector({
      server,
      createClient: () => this.#createClient(),
      signal,
      timeoutMs,
      logger: this.#host.logger,
      scrub: this.#host.scrub,
    });
    let abandoned = false;
    let arrived: McpConnection | undefined;
    // The pool owns the attempt until it settles, even once abandoned: close() waits for it, and a
    // connection that arrives late is closed (whichever of abandon and arrival happens first).
    this.#host.track(
      attempt.then(
        (late) => {
          arrived = late;
          return abandoned ? late.close() : undefined;
        },
        () => {},
      ),
    );
    try {
      const connection = await waitFor(attempt, { signal });
      // Closed meanwhile: the catch below hands the connection to the pool to close.
      if (this.closed) throw this.#host.closedError();
      const declared = connection.client.getServerCapabilities();
      if (this.#host.hostInstance !== undefined && hostInstanceOf(declared) === this.#host.hostInstance) {
        this.#refused = selfImportError(this.server.name, 'it declared this host\'s own id (a host of the same config directory)');
        throw this.#refused;
      }
      this.connection = connection;
      this.capabilities = { resources: Boolean(declared?.resources), prompts: Boolean(declared?.prompts) };
      this.connectMs = performance.now() - started;
      this.attempt = 0;
      this.nextConnectAt = 0;
      this.lastError = undefined;
      this.lastErrorCode = undefined;
      this.listCache.clear();
      this.listEpoch += 1;
      this.#setState('connected');
      this.toolList.reset(this.startBudgetMs());
      this.#lastActivity = performance.now();
      this.#armIdle(this.server.idleTimeoutMs);
      return connection;
    } catch (error) {
      abandoned = true;
      if (arrived && arrived !== this.connection) this.#host.track(arrived.close());
      if (this.closed) throw this.#host.closedError();
      const timedOut = signal.aborted || (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
      this.attempt += 1;
      this.nextConnectAt = Date.now() + backoffMs(this.attempt);
      const detail = timedOut ? `did not finish connecting within ${server.connectTimeoutMs / 1000} s` : this.#host.describe(error);
      this.lastErrorCode = !timedOut && isMcpClientError(error) ? error.code : undefined;
      const transportError = this.#lastTransportError;
      const sameError = transportError === capText(this.#host.scrub(errorText(error)), 300);
      this.lastError = capText(transportError && !timedOut && !sameError ? `${detail}; ${transportError}` : detail);
      this.#setState(this.connectMs === undefined ? 'failed' : 'disconnected');
      this.#host.logger.warn(`mcp server '${server.name}' failed to connect: ${this.lastError}`);
      throw new CapabilityError('failed', `MCP server '${server.name}' is not available: ${this.lastError}`, { cause: error });
    } finally {
      deadline.clear();
    }
  }

  #createClient(): Client {
    const hooks = this.#host.requestHooks;
    const client = new Client(this.#host.clientInfo, { capabilities: clientCapabilities(hooks) });
    routeProgress(client);
    installServerRequests(client, hooks, { server: this.server.name, scrub: this.#host.scrub, elicitor: () => this.calls.elicitor() });
    for (const list of ['resources', 'prompts'] as const) {
      client.setNotificationHandler(`notifications/${list}/list_changed`, () => {
        if (this.connection?.client !== client || this.closed) return;
        // Only this server's cached list is dropped.
        this.listCache.delete(list);
        this.listEpoch += 1;
        this.#host.emit({ type: 'list-changed', server: this.server.name, list });
      });
    }
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (this.connection?.client !== client || this.closed) return;
      // Only this server is re-listed; the others keep their lists.
      this.toolList.invalidate(this.server.connectTimeoutMs);
      this.#host.toolsChanged(this);
    });
    client.setNotificationHandler('notifications/message', (notification) => {
      const data = notification.params.data;
      const text = typeof data === 'string' ? data : safeJson(data ?? null, CONTENT_LIMITS.contentMeta);
      this.#host.logger.debug(`[${this.server.name} ${notification.params.level}] ${capText(this.#host.scrub(text ?? ''), 2_000)}`);
    });
    client.onerror = (error) => {
      this.#lastTransportError = capText(this.#host.scrub(errorText(error)), 300);
      this.#host.logger.debug(`mcp server '${this.server.name}': ${this.#lastTransportError}`);
    };
    client.onclose = () => {
      if (this.connection?.client !== client) return;
      const connection = this.connection;
      this.connection = undefined;
      if (this.closed) return;
      this.toolList.stop();
      this.attempt += 1;
      this.nextConnectAt = Date.now() + backoffMs(this.attempt);
      this.lastError = capText(`the connection closed${this.#lastTransportError ? `: ${this.#lastTransportError}` : ''}`);
      this.#setState('disconnected');
      this.#host.logger.warn(`mcp server '${this.server.name}' disconnected: ${this.lastError}`);
      this.#host.track(connection.close());
    };
    return client;
  }

  /**
   * Brings the tool list up to date as far as a caller may wait (see {@link SessionTools.ensure}):
   * `full` waits for the listing under way (startup, `refresh()`); otherwise at most a short grace.
   */
  ensureTools(full = false, signal?: AbortSignal): Promise<void> {
    if (this.closed || !this.connection) return Promise.resolve();
    return this.toolList.ensure(this.server.connectTimeoutMs, full, signal);
  }

  /** Re-lists now and waits for it (`refresh()`). */
  relist(signal?: AbortSignal): Promise<void> {
    if (this.closed || !this.connection) return Promise.resolve();
    this.toolList.invalidate(this.server.connectTimeoutMs);
    return this.toolList.ensure(this.server.connectTimeoutMs, true, signal);
  }

  /**
   * Marks a call in flight until the returned function runs: an idle disconnect never cuts a call,
   * and a call resets the idle clock. Costs two counter updates, no timer work.
   */
  beginCall(): () => void {
    this.#active += 1;
    this.#lastActivity = performance.now();
    return () => {
      this.#active -= 1;
      this.#lastActivity = performance.now();
    };
  }

  /** One timer per connection: when it fires it checks the idle clock and re-arms for what is left. */
  #armIdle(idleMs: number | undefined): void {
    this.#clearIdle();
    if (idleMs === undefined || this.closed) return;
    const check = () => {
      this.#idleTimer = undefined;
      if (this.closed || !this.connection || this.state !== 'connected') return;
      const quiet = performance.now() - this.#lastActivity;
      if (this.#active > 0 || quiet < idleMs) {
        this.#idleTimer = setTimeout(check, this.#active > 0 ? idleMs : idleMs - quiet);
        this.#idleTimer.unref?.();
        return;
      }
      const connection = this.connection;
      this.connection = undefined;
      this.toolList.stop();
      this.nextConnectAt = 0;
      this.#host.logger.info(`mcp server '${this.server.name}' disconnected after ${idleMs / 1000} s without calls; the next call reconnects`);
      this.#setState('idle');
      this.#host.track(connection.close());
    };
    this.#idleTimer = setTimeout(check, idleMs);
    this.#idleTimer.unref?.();
  }

  #clearIdle(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  /** Records a failed call; the third in a row pauses the server (and recycles a timed-out session). */
  recordFailure(timedOut: boolean): void {
    this.failures += 1;
    this.lastFailureTimedOut = timedOut;
    if (this.failures < PAUSE_AFTER_FAILURES) return;
    this.pausedUntil = Date.now() + PAUSE_MS;
    this.failures = 0;
    this.#host.logger.warn(`mcp server '${this.server.name}' paused after ${PAUSE_AFTER_FAILURES} consecutive failures until ${new Date(this.pausedUntil).toISOString()}`);
    this.#pausedReported = true;
    this.#host.emit({ type: 'server-state', server: this.server.name, state: 'paused', previous: this.state });
    if (timedOut) this.recycle('timed out repeatedly');
  }

  recordSuccess(): void {
    this.failures = 0;
    if (this.#pausedReported && this.pausedUntil <= Date.now()) {
      this.#pausedReported = false;
      if (this.state === 'connected') this.#host.emit({ type: 'server-state', server: this.server.name, state: 'connected', previous: 'paused' });
    }
  }

  /** Drops the session so the next call reconnects; the failed call is not replayed. */
  recycle(reason: string): void {
    const connection = this.connection;
    if (!connection) return;
    this.connection = undefined;
    this.toolList.stop();
    this.nextConnectAt = 0;
    this.lastError = capText(`session recycled: ${reason}`);
    this.#setState('disconnected');
    this.#host.logger.warn(`mcp server '${this.server.name}': ${this.lastError}`);
    this.#host.track(connection.close());
  }

  /**
   * Resolves or rejects as `call` does, but rejects with the closed error as soon as the session
   * closes (the connection's own close may wait for a slow process to exit).
   */
  settleOnClose<T>(call: Promise<T>): Promise<T> {
    if (this.closed) {
      call.catch(() => {});
      return Promise.reject(this.#host.closedError());
    }
    return new Promise<T>((resolve, reject) => {
      const calls = this.#calls;
      calls.add(reject);
      call.then(
        (value) => {
          calls.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          calls.delete(reject);
          reject(error as Error);
        },
      );
    });
  }

  async close(): Promise<void> {
    const wasClosed = this.closed;
    this.abort.abort();
    this.toolList.stop();
    this.#clearIdle();
    if (this.#calls.size > 0) {
      const error = this.#host.closedError();
      for (const reject of this.#calls) reject(error);
      this.#calls.clear();
    }
    const connection = this.connection;
    this.connection = undefined;
    if (wasClosed) this.state = 'closed';
    else this.#setState('closed');
    const pending = this.#connecting;
    await Promise.allSettled([connection?.close(), pending]);
  }
}
