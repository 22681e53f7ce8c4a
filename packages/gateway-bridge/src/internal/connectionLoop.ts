import { MAX_TIMER_MS, waitFor } from '@capnode/toolkit';
import { GATEWAY_PRE_CONNECT_MAX_BYTES, connectChallengeSchema, type GatewayEventFrame, type GatewayFrame, type GatewayResponseFrame, type HelloOk } from '@capnode/protocol/gateway';
import type { GatewayClientOptions, GatewayClientStatus, GatewayConnectionState, GatewayLogLevel, GatewayRequestOptions } from '../connection/clientContract.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { GatewaySocket } from '../connection/socket.js';
import { encodeFrame, screenFrame } from './frames.js';
import { buildConnectParams, readHandshakeResponse } from './handshake.js';
import { createPendingRequests, type PendingRequests } from './pendingRequests.js';
import { createReconnectPolicy, type ReconnectCause, type ReconnectPolicy } from './reconnectPolicy.js';
import { createWaiterSet } from './waiters.js';

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 15_000;
const CLOSE_GRACE_MS = 2_000;

let requestCounter = 0;

function unref(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** One socket's life: opening → challenge → hello → open → ended. */
interface Connection {
  readonly socket: GatewaySocket;
  phase: 'opening' | 'challenge' | 'hello' | 'open' | 'ended';
  connectId?: string;
  hello?: HelloOk;
  maxPayload: number;
  handshakeTimer?: ReturnType<typeof setTimeout>;
  tickTimer?: ReturnType<typeof setTimeout>;
  /** Set when the handshake failed, to decide between reconnect and stop when the socket closes. */
  failure?: GatewayError;
  /** Reconnect without delay after this connection closes. */
  immediate?: boolean;
  readonly pending: PendingRequests;
  sentDeviceToken?: boolean;
  /** Resolves once the socket reported its close. */
  readonly ended: Promise<void>;
  readonly markEnded: () => void;
}

/**
 * The gateway client's connection state machine: opens sockets, runs the handshake
 * (`internal/handshake`), routes frames to the pending requests (`internal/pendingRequests`) and
 * event listeners, watches ticks, and reconnects by the reconnect policy (`internal/reconnectPolicy`).
 */
export class ConnectionLoop {
  readonly url: string;
  readonly listeners = new Set<(event: GatewayEventFrame) => void>();
  private readonly options: GatewayClientOptions;
  private readonly policy: ReconnectPolicy;
  /** Callers of `ready()` waiting for the next handshake (or the client's stop). */
  private readonly readyWaiters = createWaiterSet<HelloOk>();
  private readonly requestTimeoutMs: number;
  private readonly handshakeTimeoutMs: number;
  private state: GatewayConnectionState = 'connecting';
  private current: Connection | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private nextRetryAt: number | undefined;
  private connectedAt: number | undefined;
  private lastError: GatewayError | undefined;
  private pairingRequestId: string | undefined;
  private rejectedFrames = 0;
  private closePromise: Promise<void> | undefined;

  constructor(options: GatewayClientOptions) {
    this.options = options;
    this.url = options.url;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.policy = createReconnectPolicy({ backoff: options.backoff, random: options.random ?? Math.random });
    if (options.onEvent) this.listeners.add(options.onEvent);
  }

  log(level: GatewayLogLevel, message: string): void {
    try {
      this.options.onLog?.(level, message);
    } catch {
      // A logger's fault must not break the connection.
    }
  }

  /** Starts connecting, or stays closed when `signal` is already aborted. */
  start(): void {
    if (this.options.signal?.aborted) {
      this.state = 'closed';
      return;
    }
    this.options.signal?.addEventListener('abort', () => void this.close(), { once: true });
    this.connect();
  }

  hello(): HelloOk | undefined {
    return this.current?.phase === 'open' ? this.current.hello : undefined;
  }

  status(): GatewayClientStatus {
    const hello = this.hello();
    const { state, lastError } = this;
    return {
      state,
      url: this.url,
      role: this.options.role,
      ...(this.options.identity ? { deviceId: this.options.identity.deviceId } : {}),
      attempt: this.policy.attempt,
      ...(hello && this.connectedAt !== undefined ? { connectedAt: this.connectedAt, server: { version: hello.server.version, connId: hello.server.connId }, scopes: hello.auth.scopes } : {}),
      ...(state === 'waiting' && this.nextRetryAt !== undefined ? { nextRetryAt: this.nextRetryAt } : {}),
      ...(lastError ? { lastError: { code: lastError.code, message: lastError.message, ...(lastError.detailCode ? { detailCode: lastError.detailCode } : {}) } } : {}),
      ...(this.pairingRequestId ? { pairingRequestId: this.pairingRequestId } : {}),
      rejectedFrames: this.rejectedFrames,
    };
  }

  private emitStatus(): void {
    try {
      this.options.onStatus?.(this.status());
    } catch {
      // The listener's problem.
    }
  }

  private send(connection: Connection, frame: object): void {
    connection.socket.send(encodeFrame(frame, { open: connection.phase === 'open', maxPayload: connection.maxPayload }));
  }

  private armTickWatchdog(connection: Connection): void {
    if (connection.tickTimer) clearTimeout(connection.tickTimer);
    const tickIntervalMs = connection.hello?.policy.tickIntervalMs;
    if (!tickIntervalMs) return;
    const deadline = Math.min(2 * tickIntervalMs, MAX_TIMER_MS);
    connection.tickTimer = unref(
      setTimeout(() => {
        if (this.current !== connection || connection.phase !== 'open') return;
        this.log('warning', `no tick from ${this.url} for ${deadline} ms; treating the connection as dead and reconnecting`);
        this.lastError = new GatewayError('unavailable', `no tick from the gateway for ${deadline} ms`, { retryable: true });
        connection.socket.terminate();
      }, deadline),
    );
  }

  private endConnection(connection: Connection): void {
    connection.phase = 'ended';
    if (connection.handshakeTimer) clearTimeout(connection.handshakeTimer);
    if (connection.tickTimer) clearTimeout(connection.tickTimer);
  }

  private scheduleReconnect(cause: ReconnectCause): void {
    if (this.state === 'closed' || this.state === 'failed') return;
    const delay = this.policy.nextDelay(cause);
    this.state = 'waiting';
    this.nextRetryAt = Date.now() + delay;
    if (delay > 0) this.log('info', `reconnecting to ${this.url} in ${Math.round(delay / 100) / 10} s`);
    this.emitStatus();
    // Not unref'd: a pending reconnect is what keeps a node alive between connections.
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.nextRetryAt = undefined;
      this.connect();
    }, delay);
  }

  private stop(error: GatewayError): void {
    this.state = 'failed';
    this.lastError = error;
    this.log('error', error.message);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.readyWaiters.rejectAll(error);
    this.emitStatus();
  }

  private onHandshakeResponse(connection: Connection, frame: GatewayResponseFrame): void {
    const outcome = readHandshakeResponse(frame, { url: this.url, role: this.options.role, sentDeviceToken: connection.sentDeviceToken === true });
    if (!outcome.ok) {
      connection.failure = outcome.failure;
      if (!frame.ok) this.lastError = outcome.failure;
      if (outcome.failure.code === 'pairing_required') {
        this.pairingRequestId = outcome.pairingRequestId;
        this.log('warning', outcome.failure.message);
      }
      if (outcome.deviceTokenRejected && this.options.deviceTokens) {
        this.options.deviceTokens.clear(this.url, this.options.role);
        connection.immediate = true;
      }
      connection.socket.close(outcome.close.code, outcome.close.reason);
      return;
    }
    const { hello } = outcome;
    if (connection.handshakeTimer) clearTimeout(connection.handshakeTimer);
    connection.phase = 'open';
    connection.hello = hello;
    connection.maxPayload = hello.policy.maxPayload;
    this.connectedAt = Date.now();
    this.policy.connected();
    this.lastError = undefined;
    this.pairingRequestId = undefined;
    this.state = 'connected';
    this.keepDeviceToken(hello);
    this.armTickWatchdog(connection);
    this.log('info', `connected to ${this.url} as ${this.options.role} (gateway ${hello.server.version}, protocol ${hello.protocol})`);
    this.emitStatus();
    this.readyWaiters.resolveAll(hello);
    try {
      this.options.onConnected?.(hello);
    } catch (error) {
      this.log('error', `onConnected failed: ${toError(error).message}`);
    }
  }

  private keepDeviceToken(hello: HelloOk): void {
    if (!hello.auth.deviceToken || !this.options.deviceTokens || !this.options.identity) return;
    try {
      this.options.deviceTokens.save(this.url, this.options.role, hello.auth.deviceToken);
    } catch (error) {
      this.log('warning', `could not keep the gateway's device token: ${toError(error).message}`);
    }
  }

  private async sendConnect(connection: Connection, challenge: { nonce: string; ts: number }): Promise<void> {
    const { options } = this;
    const deviceToken = options.identity ? options.deviceTokens?.load(this.url, options.role) : undefined;
    connection.sentDeviceToken = deviceToken !== undefined;
    const params = await buildConnectParams(
      {
        role: options.role,
        scopes: options.scopes ?? [],
        client: options.client,
        token: options.token,
        password: options.password,
        deviceToken,
        declaration: options.declaration?.(),
        identity: options.identity,
        locale: options.locale,
        userAgent: options.userAgent,
      },
      challenge,
    );
    if (this.current !== connection || connection.phase !== 'challenge') return;
    const id = `connect-${++requestCounter}`;
    connection.connectId = id;
    connection.phase = 'hello';
    this.send(connection, { type: 'req', id, method: 'connect', params });
  }

  private onChallenge(connection: Connection, frame: GatewayFrame): void {
    if (frame.type !== 'event' || frame.event !== 'connect.challenge') return;
    const challenge = connectChallengeSchema.safeParse(frame.payload);
    if (!challenge.success) {
      this.rejectedFrames += 1;
      this.log('warning', `dropped a connect.challenge without a valid nonce and ts from ${this.url}`);
      return;
    }
    connection.phase = 'challenge';
    this.sendConnect(connection, challenge.data).catch((error: unknown) => {
      if (this.current !== connection) return;
      if (isGatewayError(error) && error.code === 'payload_too_large') connection.failure = new GatewayError('connect_rejected', error.message);
      this.lastError = isGatewayError(error) ? error : new GatewayError('unavailable', `could not send connect: ${toError(error).message}`, { cause: error });
      connection.socket.terminate();
    });
  }

  private dispatchEvent(connection: Connection, frame: GatewayEventFrame): void {
    if (frame.event === 'tick') this.armTickWatchdog(connection);
    for (const listener of [...this.listeners]) {
      try {
        listener(frame);
      } catch (error) {
        this.log('error', `event listener failed on ${frame.event}: ${toError(error).message}`);
      }
    }
  }

  private onFrameText(connection: Connection, text: string | undefined, bytes: number): void {
    if (this.current !== connection || connection.phase === 'ended') return;
    const screened = screenFrame(text, bytes, { open: connection.phase === 'open', maxPayload: connection.maxPayload });
    if (!screened.ok) {
      this.rejectedFrames += 1;
      this.log('warning', `${screened.reason} (from ${this.url})`);
      return;
    }
    const { frame } = screened;
    switch (connection.phase) {
      case 'opening':
      case 'challenge':
        this.onChallenge(connection, frame);
        return;
      case 'hello':
        if (frame.type === 'res' && frame.id === connection.connectId) this.onHandshakeResponse(connection, frame);
        return;
      case 'open':
        if (frame.type === 'res') connection.pending.settle(frame);
        else if (frame.type === 'event') this.dispatchEvent(connection, frame);
        return;
      default:
        return;
    }
  }

  private onSocketClose(connection: Connection, code: number, reason: string): void {
    if (this.current !== connection) return;
    const wasOpen = connection.phase === 'open';
    const closed = `${code}${reason ? ` ${reason}` : ''}`;
    this.endConnection(connection);
    connection.markEnded();
    this.current = undefined;
    this.connectedAt = undefined;
    connection.pending.failAll(new GatewayError('connection_lost', `the connection to ${this.url} closed (${closed}) before the response arrived`, { retryable: true }));
    if (this.state === 'closed') return;
    const failure = connection.failure;
    if (failure && !failure.retryable) {
      this.stop(failure);
      return;
    }
    if (wasOpen) this.log('warning', `connection to ${this.url} closed (${closed})`);
    if (!failure && !wasOpen && !this.lastError) {
      this.lastError = new GatewayError('unavailable', `could not connect to ${this.url} (${closed})`, { retryable: true });
    } else if (!failure && wasOpen) {
      this.lastError ??= new GatewayError('unavailable', `the connection to ${this.url} closed (${closed})`, { retryable: true });
    }
    this.scheduleReconnect({ failure, immediate: connection.immediate === true, closeCode: code, wasOpen });
  }

  private connect(): void {
    if (this.state === 'closed' || this.state === 'failed') return;
    this.state = 'connecting';
    this.emitStatus();
    let connection: Connection | undefined;
    let socket: GatewaySocket;
    try {
      socket = this.options.createSocket(this.url, {
        onOpen: () => {
          if (connection && this.current === connection && connection.phase === 'opening') connection.phase = 'challenge';
        },
        onMessage: (text, bytes) => {
          if (connection) this.onFrameText(connection, text, bytes);
        },
        onClose: (code, reason) => {
          if (connection) this.onSocketClose(connection, code, reason);
        },
        onError: (error) => {
          if (!connection || this.current !== connection) return;
          if (connection.phase === 'open') this.log('warning', `connection error on ${this.url}: ${error.message}`);
          else this.lastError = new GatewayError('unavailable', `could not connect to ${this.url}: ${error.message}`, { retryable: true, cause: error });
        },
      });
    } catch (error) {
      this.lastError = new GatewayError('unavailable', `could not open a socket to ${this.url}: ${toError(error).message}`, { retryable: true, cause: error });
      this.scheduleReconnect({ failure: this.lastError });
      return;
    }
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const opened: Connection = { socket, phase: 'opening', maxPayload: GATEWAY_PRE_CONNECT_MAX_BYTES, pending: createPendingRequests(), ended, markEnded };
    connection = opened;
    this.current = opened;
    opened.handshakeTimer = unref(
      setTimeout(() => {
        if (this.current !== opened || opened.phase === 'open') return;
        this.lastError = new GatewayError('timeout', `no hello-ok from ${this.url} within ${this.handshakeTimeoutMs} ms`, { retryable: true });
        this.log('warning', this.lastError.message);
        opened.socket.terminate();
      }, this.handshakeTimeoutMs),
    );
  }

  ready(readyOptions: { readonly signal?: AbortSignal; readonly timeoutMs?: number } = {}): Promise<HelloOk> {
    const hello = this.hello();
    if (this.state === 'connected' && hello) return Promise.resolve(hello);
    if (this.state === 'failed') return Promise.reject(this.lastError ?? new GatewayError('closed', 'the gateway client stopped'));
    if (this.state === 'closed') return Promise.reject(new GatewayError('closed', 'the gateway client is closed'));
    return this.readyWaiters.wait({
      // The shared deadline caps it at the largest timer delay.
      timeoutMs: readyOptions.timeoutMs,
      signal: readyOptions.signal,
      timeoutError: () => new GatewayError('timeout', `not connected to ${this.url} within ${readyOptions.timeoutMs} ms${this.lastError ? `: ${this.lastError.message}` : ''}`, { retryable: true }),
      abortError: () => new GatewayError('aborted', 'waiting for the gateway connection was aborted', { cause: readyOptions.signal?.reason }),
    });
  }

  async request<T>(method: string, params: unknown, requestOptions: GatewayRequestOptions = {}): Promise<T> {
    const timeoutMs = requestOptions.timeoutMs ?? this.requestTimeoutMs;
    const started = Date.now();
    if (requestOptions.signal?.aborted) throw new GatewayError('aborted', `${method} was aborted`, { cause: requestOptions.signal.reason });
    if (this.state !== 'connected' || this.current?.phase !== 'open') {
      if (requestOptions.waitForConnection === false) throw new GatewayError('not_connected', `not connected to ${this.url}`, { retryable: true });
      await this.ready({ timeoutMs, ...(requestOptions.signal ? { signal: requestOptions.signal } : {}) });
    }
    const connection = this.current;
    if (!connection || connection.phase !== 'open') throw new GatewayError('not_connected', `not connected to ${this.url}`, { retryable: true });
    const id = `${this.options.role}-${++requestCounter}-${started.toString(36)}`;
    const response = connection.pending.track<T>(id, method, {
      timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)),
      signal: requestOptions.signal,
      timeoutMessage: `${method} got no response from ${this.url} within ${timeoutMs} ms`,
    });
    try {
      this.send(connection, params === undefined ? { type: 'req', id, method } : { type: 'req', id, method, params });
    } catch (error) {
      connection.pending.fail(id, isGatewayError(error) ? error : new GatewayError('connection_lost', `could not send ${method}: ${toError(error).message}`, { cause: error, retryable: true }));
    }
    return response;
  }

  reconnect(reason: string): void {
    if (this.state === 'closed' || this.state === 'failed') return;
    const connection = this.current;
    if (!connection) {
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
        this.connect();
      }
      return;
    }
    this.log('info', `reconnecting to ${this.url}: ${reason}`);
    connection.immediate = true;
    connection.socket.close(1000, reason.slice(0, 100));
  }

  close(): Promise<void> {
    this.closePromise ??= this.closeOnce();
    return this.closePromise;
  }

  private async closeOnce(): Promise<void> {
    this.state = 'closed';
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.readyWaiters.rejectAll(new GatewayError('closed', 'the gateway client is closed'));
    const connection = this.current;
    this.emitStatus();
    if (!connection) return;
    try {
      connection.socket.close(1000, 'client closing');
    } catch {
      connection.socket.terminate();
    }
    // A gateway that never answers the close gets the socket terminated after the grace.
    await waitFor(connection.ended, { timeoutMs: CLOSE_GRACE_MS, unref: true }).catch(() => {});
    if (this.current === connection) {
      connection.socket.terminate();
      this.endConnection(connection);
      connection.markEnded();
      this.current = undefined;
      connection.pending.failAll(new GatewayError('closed', 'the gateway client is closed'));
    }
  }
}
