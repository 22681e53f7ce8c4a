import { CapabilityError } from '@capnode/capabilities';
import { Client, SdkError, SdkErrorCode, type Implementation } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../config.js';
import { capText } from '../redact.js';
import type { Logger, McpConnection, McpConnector, McpRuntimeEvent, ServerDiagnostic, ServerState } from '../types.js';
import { createDeadline } from '@capnode/protocol';
import { CONTENT_LIMITS, safeJson } from './contentLimits.js';
import { routeProgress } from './progress.js';
import { clientCapabilities, installServerRequests, type ServerRequestHooks } from './serverRequests.js';
import { CallsInFlight } from './callsInFlight.js';
import { SessionTools } from './sessionTools.js';
import type { ListedTool } from './toolListing.js';
import { errorText, raceAbort } from './util.js';

const PAUSE_AFTER_FAILURES = 3;
const PAUSE_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;

function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.max(0, attempt - 1));
}

/** What a session needs from the pool that owns it. */
export interface SessionHost {
  readonly connector: McpConnector;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
  readonly clientInfo: Implementation;
  describe(error: unknown): string;
  closedError(): Error;
  toolsChanged(session: ServerSession): void;
  catalogChanged(session: ServerSession): void;
  track(promise: Promise<unknown>): void;
  /** Answers to server-initiated requests; decide the capabilities each client declares. */
  readonly requestHooks: ServerRequestHooks;
  /** The runtime's default idle disconnect (ms; 0 or absent: off). */
  readonly idleTimeoutMs: number | undefined;
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
  /** Problems reading `pinned_resources` at start. */
  readonly pinnedWarnings: string[] = [];
  lastError: string | undefined;
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
  /** Rejecters of the calls in flight, failed at once when the session closes. */
  readonly #calls = new Set<(error: Error) => void>();
  #lastTransportError: string | undefined;
  readonly #host: SessionHost;
  /** Calls in flight: the idle timer and the elicitors of their clients. */
  readonly calls: CallsInFlight;
  /** Set while disconnected because of `idle_timeout_ms`. */
  idle = false;
  #pausedReported = false;
  /** `resources/list` and `prompts/list` answers (first page), until the server says they changed or reconnects. */
  readonly listCache = new Map<string, unknown>();
  /** Bumped whenever cached lists are dropped, so a listing under way then is not kept. */
  listEpoch = 0;

  constructor(server: McpServerConfig, host: SessionHost) {
    this.server = server;
    this.#host = host;
    this.calls = new CallsInFlight({
      idleTimeoutMs: () => this.idleTimeoutMs,
      connected: () => !this.closed && this.connection !== undefined && this.state === 'connected',
      onIdle: () => this.#disconnectIdle(),
    });
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
      ...(failed && !this.idle && this.lastError !== undefined ? { error: this.lastError } : {}),
      ...(state === 'disconnected' && this.idle ? { idle: true } : {}),
    });
  }

  /** The idle disconnect of this server in ms (0: off). */
  get idleTimeoutMs(): number {
    return this.server.idle_timeout_ms ?? this.#host.idleTimeoutMs ?? 0;
  }

  /** Ends an idle connection; the catalog keeps the tools and the next call reconnects at once. */
  #disconnectIdle(): void {
    const connection = this.connection;
    if (!connection || this.closed) return;
    this.connection = undefined;
    this.toolList.stop();
    this.idle = true;
    this.attempt = 0;
    this.nextConnectAt = 0;
    this.#host.logger.info(`mcp server '${this.server.name}' disconnected after ${this.idleTimeoutMs} ms idle; the next call reconnects`);
    this.#setState('disconnected');
    this.#host.track(connection.close());
  }

  get tools(): readonly ListedTool[] {
    return this.toolList.tools;
  }

  get toolsStale(): boolean {
    return this.toolList.stale;
  }

  /**
   * Milliseconds start-up work (the first listing, pinned resources) may still take: what is left of
   * the connect timeout, at least 1 s; the whole timeout once that has passed. So a server's start-up
   * takes about one connect timeout whatever the server does.
   */
  startBudgetMs(): number {
    return this.#listTimeoutMs();
  }

  #listTimeoutMs(): number {
    const whole = this.server.connect_timeout_secs * 1000;
    const left = this.#connectDeadline - performance.now();
    return left > 0 ? Math.max(Math.min(left, whole), 1_000) : whole;
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
      ...(this.idle && !this.connection ? { idle: true } : {}),
      ...(this.connectMs === undefined ? {} : { connectMs: Math.round(this.connectMs) }),
      ...(this.lastError === undefined ? {} : { error: this.lastError }),
      ...(paused ? { pausedUntil: new Date(this.pausedUntil).toISOString() } : {}),
      ...(info ? { serverInfo: { name: capText(String(info.name), 100), version: capText(String(info.version), 50) } } : {}),
    };
  }

  /** Connects unless connected; concurrent callers share one attempt; honours the reconnect backoff. */
  ensureConnected(signal?: AbortSignal): Promise<McpConnection> {
    if (this.closed) return Promise.reject(this.#host.closedError());
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
    return signal ? raceAbort(this.#connecting, signal) : this.#connecting;
  }

  async #connect(): Promise<McpConnection> {
    const server = this.server;
    const timeoutMs = server.connect_timeout_secs * 1000;
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
    // The pool owns the attempt until it settles, even once abandoned: close() waits for it, and a
    // connection that arrives late is closed.
    this.#host.track(
      attempt.then(
        (late) => (abandoned ? late.close() : undefined),
        () => {},
      ),
    );
    try {
      const connection = await raceAbort(attempt, signal);
      if (this.closed) {
        await connection.close().catch(() => {});
        throw this.#host.closedError();
      }
      this.connection = connection;
      const declared = connection.client.getServerCapabilities();
      this.capabilities = { resources: Boolean(declared?.resources), prompts: Boolean(declared?.prompts) };
      this.connectMs = performance.now() - started;
      this.attempt = 0;
      this.nextConnectAt = 0;
      this.lastError = undefined;
      this.listCache.clear();
      this.listEpoch += 1;
      this.#setState('connected');
      this.idle = false;
      this.toolList.reset(this.#listTimeoutMs());
      this.calls.touch();
      return connection;
    } catch (error) {
      abandoned = true;
      if (this.closed) throw this.#host.closedError();
      const timedOut = signal.aborted || (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
      this.attempt += 1;
      this.nextConnectAt = Date.now() + backoffMs(this.attempt);
      const detail = timedOut ? `did not finish connecting within ${server.connect_timeout_secs} s` : this.#host.describe(error);
      const transportError = this.#lastTransportError;
      const sameError = transportError === capText(this.#host.scrub(errorText(error)), 300);
      this.lastError = capText(transportError && !timedOut && !sameError ? `${detail}; ${transportError}` : detail);
      this.idle = false;
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
      this.toolList.invalidate(this.server.connect_timeout_secs * 1000);
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
      this.calls.clear();
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
    return this.toolList.ensure(this.#listTimeoutMs(), full, signal);
  }

  /** Re-lists now and waits for it (`refresh()`). */
  relist(signal?: AbortSignal): Promise<void> {
    if (this.closed || !this.connection) return Promise.resolve();
    this.toolList.invalidate(this.server.connect_timeout_secs * 1000);
    return this.toolList.ensure(this.server.connect_timeout_secs * 1000, true, signal);
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
    this.calls.clear();
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
    this.calls.clear();
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
