import {
  GATEWAY_PRE_CONNECT_MAX_BYTES,
  GATEWAY_PROTOCOL_VERSION,
  buildDeviceAuthPayload,
  connectChallengeSchema,
  gatewayErrorDetailCode,
  helloOkSchema,
  parseGatewayFrame,
  type ConnectParams,
  type GatewayClientId,
  type GatewayClientMode,
  type GatewayErrorShape,
  type GatewayEventFrame,
  type GatewayResponseFrame,
  type GatewayRole,
  type HelloOk,
} from '@capnode/protocol/gateway';
import type { BackoffOptions } from './backoff.js';
import { GatewayError, isGatewayError } from './errors.js';
import type { DeviceIdentity, DeviceTokenStore } from './identity.js';
import { classifyConnectError } from './internal/connectErrors.js';
import { createReconnectPolicy, type ReconnectCause } from './internal/reconnectPolicy.js';
import { utf8Length } from './internal/utf8.js';
import type { GatewaySocket, GatewaySocketFactory } from './socket.js';

/** `client` of `connect`: who is connecting. */
export interface GatewayClientInfo {
  readonly id: GatewayClientId;
  readonly mode: GatewayClientMode;
  readonly version: string;
  /** OS platform (`linux`, `macos`, `windows`); signed lower-cased. */
  readonly platform: string;
  readonly deviceFamily?: string;
  readonly displayName?: string;
  readonly instanceId?: string;
}

/** What a node declares at connect; read again on every connect. */
export interface GatewayDeclaration {
  readonly caps: readonly string[];
  readonly commands: readonly string[];
  readonly permissions?: Readonly<Record<string, boolean>>;
}

export type GatewayLogLevel = 'debug' | 'info' | 'warning' | 'error';

/** Where the connection is: `waiting` is the pause before a reconnect, `failed` a stop that needs the user. */
export type GatewayConnectionState = 'connecting' | 'connected' | 'waiting' | 'failed' | 'closed';

/** The client's real state, for `capnode gateway status` and the tray. */
export interface GatewayClientStatus {
  readonly state: GatewayConnectionState;
  readonly url: string;
  readonly role: GatewayRole;
  readonly deviceId?: string;
  /** Failed connect attempts since the last successful handshake. */
  readonly attempt: number;
  /** Epoch ms of the current connection's handshake. */
  readonly connectedAt?: number;
  readonly server?: { readonly version: string; readonly connId: string };
  /** Scopes the gateway granted on the current connection. */
  readonly scopes?: readonly string[];
  /** Epoch ms of the next connect attempt while `waiting`. */
  readonly nextRetryAt?: number;
  /** Why the last attempt or connection ended. */
  readonly lastError?: { readonly code: string; readonly message: string; readonly detailCode?: string };
  /** Set while the gateway waits for its owner to approve this device. */
  readonly pairingRequestId?: string;
  /** Frames dropped as malformed or oversized since the client started. */
  readonly rejectedFrames: number;
}

export interface GatewayClientOptions {
  /** `ws://` or `wss://` URL of the gateway. */
  readonly url: string;
  /** The gateway's shared token (`gateway.auth.token`). */
  readonly token?: string;
  readonly password?: string;
  readonly role: GatewayRole;
  readonly scopes?: readonly string[];
  readonly client: GatewayClientInfo;
  /** Caps, commands and permissions to declare, evaluated on every connect (nodes). */
  readonly declaration?: () => GatewayDeclaration;
  /** Signs the handshake; required for role `node`, and for operator scopes on most gateways. */
  readonly identity?: DeviceIdentity;
  /** Keeps the device token from `hello-ok` for later connects. */
  readonly deviceTokens?: DeviceTokenStore;
  readonly createSocket: GatewaySocketFactory;
  readonly locale?: string;
  readonly userAgent?: string;
  /** Default deadline of `request`. Default 30 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Deadline from opening the socket to `hello-ok`. Default 15 000 ms. */
  readonly handshakeTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  /** Random source for jitter (tests). */
  readonly random?: () => number;
  /** Every event after the handshake, `tick` included. */
  readonly onEvent?: (event: GatewayEventFrame) => void;
  readonly onStatus?: (status: GatewayClientStatus) => void;
  /** Called after every successful handshake (first connect and reconnects). */
  readonly onConnected?: (hello: HelloOk) => void;
  readonly onLog?: (level: GatewayLogLevel, message: string) => void;
  /** Aborting closes the client. */
  readonly signal?: AbortSignal;
}

export interface GatewayRequestOptions {
  readonly signal?: AbortSignal;
  /** Deadline including any wait for the connection. Default the client's `requestTimeoutMs`. */
  readonly timeoutMs?: number;
  /** Wait for a (re)connect when there is no connection. Default true. */
  readonly waitForConnection?: boolean;
}

/** A WebSocket client of the OpenClaw gateway that reconnects by itself. */
export interface GatewayClient {
  readonly url: string;
  status(): GatewayClientStatus;
  /** The current connection's `hello-ok`, or `undefined` while not connected. */
  hello(): HelloOk | undefined;
  /**
   * Resolves once connected. Rejects with a {@link GatewayError} when the client stops for good
   * (`auth_failed`, `protocol_mismatch`, `connect_rejected`, `closed`), on timeout or abort.
   */
  ready(options?: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<HelloOk>;
  /**
   * Sends a request and resolves with the response payload. Rejects with a {@link GatewayError}:
   * `request_failed` (the gateway said no; `gatewayCode`, `detailCode`, `retryable` tell why),
   * `timeout`, `connection_lost`, `not_connected`, `payload_too_large`, `aborted`, `closed`.
   */
  request<T = unknown>(method: string, params?: unknown, options?: GatewayRequestOptions): Promise<T>;
  /** Receives every event after the handshake; returns the unsubscribe function. */
  subscribe(listener: (event: GatewayEventFrame) => void): () => void;
  /** Drops the current connection and connects again at once (e.g. to declare new commands). */
  reconnect(reason: string): void;
  /** Closes the connection and stops reconnecting. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Pending {
  readonly method: string;
  readonly resolve: (payload: unknown) => void;
  readonly reject: (error: GatewayError) => void;
}

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
  readonly pending: Map<string, Pending>;
  sentDeviceToken?: boolean;
  /** Resolves once the socket reported its close. */
  readonly ended: Promise<void>;
  readonly markEnded: () => void;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 15_000;
const MAX_TIMER_MS = 2_147_483_647;
const CLOSE_GRACE_MS = 2_000;

let requestCounter = 0;

function unref(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** Validates the gateway URL: `ws:` or `wss:`, no credentials in it. */
function parseGatewayUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new GatewayError('connect_rejected', `Invalid gateway URL '${url}': expected ws://host:port or wss://host:port.`, { cause: error });
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new GatewayError('connect_rejected', `Invalid gateway URL '${url}': the scheme must be ws: or wss:.`);
  }
  if (parsed.username || parsed.password) {
    throw new GatewayError('connect_rejected', `Invalid gateway URL: put the token in the token option, not in the URL.`);
  }
  return parsed;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/**
 * Creates a gateway client and starts connecting: challenge → signed `connect` → `hello-ok`.
 *
 * It reconnects after any loss with backoff (1 s doubling to 30 s, with jitter; a retryable refusal's
 * `retryAfterMs` is honoured; after a `1012 service restart` close it retries every 500 ms for 30 s, so
 * it is back within about a second of a restarted gateway), considers the connection dead after 2 × `tickIntervalMs` without a
 * `tick`, presents the device token from `hello-ok` on later connects, keeps frames within 64 KiB
 * before the handshake and `policy.maxPayload` after it, and drops malformed frames without failing.
 * A refused token or protocol version stops it with an actionable {@link GatewayError}
 * (`status().state === 'failed'`).
 *
 * @example
 * await using client = createGatewayClient({
 *   url: 'ws://127.0.0.1:18789', token, role: 'operator', scopes: ['operator.read'],
 *   client: { id: 'cli', mode: 'cli', version: '0.1.0', platform: 'linux' },
 *   identity, createSocket: createWsSocketFactory(),
 * });
 * const nodes = await client.request('node.list', {});
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const parsedUrl = parseGatewayUrl(options.url);
  const url = options.url;
  const role = options.role;
  const scopes = [...(options.scopes ?? [])];
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const random = options.random ?? Math.random;
  const listeners = new Set<(event: GatewayEventFrame) => void>();
  if (options.onEvent) listeners.add(options.onEvent);

  const log = (level: GatewayLogLevel, message: string) => {
    try {
      options.onLog?.(level, message);
    } catch {
      // A logger's fault must not break the connection.
    }
  };

  let state: GatewayConnectionState = 'connecting';
  const reconnectPolicy = createReconnectPolicy({ backoff: options.backoff, random });
  let current: Connection | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let nextRetryAt: number | undefined;
  let connectedAt: number | undefined;
  let lastError: GatewayError | undefined;
  let pairingRequestId: string | undefined;
  let rejectedFrames = 0;
  let closePromise: Promise<void> | undefined;
  let readyWaiters: Array<{ resolve: (hello: HelloOk) => void; reject: (error: GatewayError) => void }> = [];

  if (parsedUrl.protocol === 'ws:' && !isLoopbackHost(parsedUrl.hostname)) {
    log('warning', `gateway ${url} is not on loopback and not wss://: the token and all traffic travel unencrypted; use wss:// (e.g. through a TLS proxy or tailscale serve).`);
  }

  const status = (): GatewayClientStatus => {
    const hello = current?.phase === 'open' ? current.hello : undefined;
    return {
      state,
      url,
      role,
      ...(options.identity ? { deviceId: options.identity.deviceId } : {}),
      attempt: reconnectPolicy.attempt,
      ...(hello && connectedAt !== undefined ? { connectedAt, server: { version: hello.server.version, connId: hello.server.connId }, scopes: hello.auth.scopes } : {}),
      ...(state === 'waiting' && nextRetryAt !== undefined ? { nextRetryAt } : {}),
      ...(lastError
        ? { lastError: { code: lastError.code, message: lastError.message, ...(lastError.detailCode ? { detailCode: lastError.detailCode } : {}) } }
        : {}),
      ...(pairingRequestId ? { pairingRequestId } : {}),
      rejectedFrames,
    };
  };

  const emitStatus = () => {
    try {
      options.onStatus?.(status());
    } catch {
      // The listener's problem.
    }
  };

  const settleReady = (result: { hello: HelloOk } | { error: GatewayError }) => {
    const waiters = readyWaiters;
    readyWaiters = [];
    for (const waiter of waiters) {
      if ('hello' in result) waiter.resolve(result.hello);
      else waiter.reject(result.error);
    }
  };

  const failPending = (connection: Connection, error: GatewayError) => {
    const pending = [...connection.pending.values()];
    connection.pending.clear();
    for (const entry of pending) entry.reject(error);
  };

  const sendFrame = (connection: Connection, frame: object): void => {
    const text = JSON.stringify(frame);
    const limit = connection.phase === 'open' ? connection.maxPayload : GATEWAY_PRE_CONNECT_MAX_BYTES;
    const bytes = utf8Length(text);
    if (bytes > limit) {
      throw new GatewayError(
        'payload_too_large',
        connection.phase === 'open'
          ? `frame of ${bytes} bytes exceeds the gateway's maxPayload of ${limit} bytes`
          : `connect frame of ${bytes} bytes exceeds the ${limit}-byte limit before the handshake; declare fewer commands`,
      );
    }
    connection.socket.send(text);
  };

  const armTickWatchdog = (connection: Connection) => {
    if (connection.tickTimer) clearTimeout(connection.tickTimer);
    const tickIntervalMs = connection.hello?.policy.tickIntervalMs;
    if (!tickIntervalMs) return;
    const deadline = Math.min(2 * tickIntervalMs, MAX_TIMER_MS);
    connection.tickTimer = unref(
      setTimeout(() => {
        if (current !== connection || connection.phase !== 'open') return;
        log('warning', `no tick from ${url} for ${deadline} ms; treating the connection as dead and reconnecting`);
        lastError = new GatewayError('unavailable', `no tick from the gateway for ${deadline} ms`, { retryable: true });
        connection.socket.terminate();
      }, deadline),
    );
  };

  const endConnection = (connection: Connection) => {
    connection.phase = 'ended';
    if (connection.handshakeTimer) clearTimeout(connection.handshakeTimer);
    if (connection.tickTimer) clearTimeout(connection.tickTimer);
  };

  const scheduleReconnect = (cause: ReconnectCause) => {
    if (state === 'closed' || state === 'failed') return;
    const delay = reconnectPolicy.nextDelay(cause);
    state = 'waiting';
    nextRetryAt = Date.now() + delay;
    if (delay > 0) log('info', `reconnecting to ${url} in ${Math.round(delay / 100) / 10} s`);
    emitStatus();
    // Not unref'd: a pending reconnect is what keeps a node alive between connections.
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      nextRetryAt = undefined;
      connect();
    }, delay);
  };

  const stop = (error: GatewayError) => {
    state = 'failed';
    lastError = error;
    log('error', error.message);
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = undefined;
    settleReady({ error });
    emitStatus();
  };

  const onHandshakeResponse = (connection: Connection, frame: GatewayResponseFrame) => {
    if (!frame.ok) {
      const error = classifyConnectError(frame.error as GatewayErrorShape, { url, role, sentDeviceToken: connection.sentDeviceToken === true });
      connection.failure = error;
      lastError = error;
      if (error.code === 'pairing_required') {
        const requestId = typeof (frame.error?.details as { requestId?: unknown } | undefined)?.requestId === 'string' ? (frame.error!.details as { requestId: string }).requestId : undefined;
        pairingRequestId = requestId;
        log('warning', error.message);
      }
      if (error.detailCode === 'DEVICE_TOKEN_REJECTED' && options.deviceTokens) {
        options.deviceTokens.clear(url, role);
        connection.immediate = true;
      }
      connection.socket.close(1000, 'connect refused');
      return;
    }
    const parsed = helloOkSchema.safeParse(frame.payload);
    if (!parsed.success) {
      connection.failure = new GatewayError('invalid_response', `The gateway at ${url} answered connect with a hello-ok that protocol ${GATEWAY_PROTOCOL_VERSION} does not describe; is it an OpenClaw gateway of a supported version?`, { cause: parsed.error });
      connection.socket.close(1002, 'invalid hello-ok');
      return;
    }
    const hello = parsed.data;
    if (hello.protocol !== GATEWAY_PROTOCOL_VERSION) {
      connection.failure = new GatewayError('protocol_mismatch', `The gateway at ${url} chose protocol ${hello.protocol}; capnode speaks ${GATEWAY_PROTOCOL_VERSION}. Update capnode or the gateway.`);
      connection.socket.close(1002, 'protocol mismatch');
      return;
    }
    if (connection.handshakeTimer) clearTimeout(connection.handshakeTimer);
    connection.phase = 'open';
    connection.hello = hello;
    connection.maxPayload = hello.policy.maxPayload;
    connectedAt = Date.now();
    reconnectPolicy.connected();
    lastError = undefined;
    pairingRequestId = undefined;
    state = 'connected';
    if (hello.auth.deviceToken && options.deviceTokens && options.identity) {
      try {
        options.deviceTokens.save(url, role, hello.auth.deviceToken);
      } catch (error) {
        log('warning', `could not keep the gateway's device token: ${toError(error).message}`);
      }
    }
    armTickWatchdog(connection);
    log('info', `connected to ${url} as ${role} (gateway ${hello.server.version}, protocol ${hello.protocol})`);
    emitStatus();
    settleReady({ hello });
    try {
      options.onConnected?.(hello);
    } catch (error) {
      log('error', `onConnected failed: ${toError(error).message}`);
    }
  };

  const sendConnect = async (connection: Connection, challenge: { nonce: string; ts: number }) => {
    const declaration = options.declaration?.();
    const deviceToken = options.identity ? options.deviceTokens?.load(url, role) : undefined;
    const auth: NonNullable<ConnectParams['auth']> = {
      ...(options.token ? { token: options.token } : {}),
      ...(options.password ? { password: options.password } : {}),
      ...(deviceToken ? { deviceToken } : {}),
    };
    connection.sentDeviceToken = deviceToken !== undefined;
    const { client } = options;
    const params: ConnectParams = {
      minProtocol: GATEWAY_PROTOCOL_VERSION,
      maxProtocol: GATEWAY_PROTOCOL_VERSION,
      client: {
        id: client.id,
        version: client.version,
        platform: client.platform,
        mode: client.mode,
        ...(client.displayName ? { displayName: client.displayName } : {}),
        ...(client.deviceFamily ? { deviceFamily: client.deviceFamily } : {}),
        ...(client.instanceId ? { instanceId: client.instanceId } : {}),
      },
      role,
      scopes,
      ...(declaration ? { caps: [...declaration.caps], commands: [...declaration.commands] } : {}),
      ...(declaration?.permissions ? { permissions: { ...declaration.permissions } } : {}),
      ...(Object.keys(auth).length ? { auth } : {}),
      ...(options.locale ? { locale: options.locale } : {}),
      ...(options.userAgent ? { userAgent: options.userAgent } : {}),
    };
    if (options.identity) {
      const payload = buildDeviceAuthPayload({
        deviceId: options.identity.deviceId,
        clientId: client.id,
        clientMode: client.mode,
        role,
        scopes,
        signedAtMs: challenge.ts,
        // The gateway verifies against auth.token when present, else auth.deviceToken.
        token: auth.token ?? auth.deviceToken,
        nonce: challenge.nonce,
        platform: client.platform,
        deviceFamily: client.deviceFamily,
      });
      const signature = await options.identity.sign(payload);
      params.device = { id: options.identity.deviceId, publicKey: options.identity.publicKey, signature, signedAt: challenge.ts, nonce: challenge.nonce };
    }
    if (current !== connection || connection.phase !== 'challenge') return;
    const id = `connect-${++requestCounter}`;
    connection.connectId = id;
    connection.phase = 'hello';
    sendFrame(connection, { type: 'req', id, method: 'connect', params });
  };

  const onFrameText = (connection: Connection, text: string | undefined, bytes: number) => {
    if (current !== connection || connection.phase === 'ended') return;
    const limit = connection.phase === 'open' ? connection.maxPayload : GATEWAY_PRE_CONNECT_MAX_BYTES;
    if (text === undefined) {
      rejectedFrames += 1;
      log('warning', `dropped a binary frame of ${bytes} bytes from ${url}; the protocol is JSON text`);
      return;
    }
    if (bytes > limit) {
      rejectedFrames += 1;
      log('warning', `dropped a frame of ${bytes} bytes from ${url}: more than the ${limit}-byte limit ${connection.phase === 'open' ? '(policy.maxPayload)' : 'before the handshake'}`);
      return;
    }
    const parsed = parseGatewayFrame(text);
    if (!parsed.ok) {
      rejectedFrames += 1;
      log('warning', `dropped a malformed frame from ${url}: ${parsed.reason}`);
      return;
    }
    const frame = parsed.frame;
    switch (connection.phase) {
      case 'opening':
      case 'challenge': {
        if (frame.type !== 'event' || frame.event !== 'connect.challenge') return;
        const challenge = connectChallengeSchema.safeParse(frame.payload);
        if (!challenge.success) {
          rejectedFrames += 1;
          log('warning', `dropped a connect.challenge without a valid nonce and ts from ${url}`);
          return;
        }
        connection.phase = 'challenge';
        sendConnect(connection, challenge.data).catch((error: unknown) => {
          if (current !== connection) return;
          if (isGatewayError(error) && error.code === 'payload_too_large') connection.failure = new GatewayError('connect_rejected', error.message);
          lastError = isGatewayError(error) ? error : new GatewayError('unavailable', `could not send connect: ${toError(error).message}`, { cause: error });
          connection.socket.terminate();
        });
        return;
      }
      case 'hello':
        if (frame.type === 'res' && frame.id === connection.connectId) onHandshakeResponse(connection, frame);
        return;
      case 'open':
        if (frame.type === 'res') {
          const entry = connection.pending.get(frame.id);
          if (!entry) return;
          connection.pending.delete(frame.id);
          if (frame.ok) entry.resolve(frame.payload);
          else {
            const error = frame.error!;
            entry.reject(
              new GatewayError('request_failed', `${entry.method} failed: ${error.message}${error.code ? ` (${gatewayErrorDetailCode(error) ?? error.code})` : ''}`, {
                gatewayCode: error.code,
                ...(gatewayErrorDetailCode(error) ? { detailCode: gatewayErrorDetailCode(error)! } : {}),
                details: error.details,
                retryable: error.retryable === true,
                ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
              }),
            );
          }
          return;
        }
        if (frame.type === 'event') {
          if (frame.event === 'tick') armTickWatchdog(connection);
          for (const listener of [...listeners]) {
            try {
              listener(frame);
            } catch (error) {
              log('error', `event listener failed on ${frame.event}: ${toError(error).message}`);
            }
          }
        }
        return;
      default:
        return;
    }
  };

  const onSocketClose = (connection: Connection, code: number, reason: string) => {
    if (current !== connection) return;
    const wasOpen = connection.phase === 'open';
    endConnection(connection);
    connection.markEnded();
    current = undefined;
    connectedAt = undefined;
    failPending(connection, new GatewayError('connection_lost', `the connection to ${url} closed (${code}${reason ? ` ${reason}` : ''}) before the response arrived`, { retryable: true }));
    if (state === 'closed') return;
    const failure = connection.failure;
    if (failure && !failure.retryable) {
      stop(failure);
      return;
    }
    if (wasOpen) log('warning', `connection to ${url} closed (${code}${reason ? ` ${reason}` : ''})`);
    if (!failure && !wasOpen && !lastError) {
      lastError = new GatewayError('unavailable', `could not connect to ${url} (${code}${reason ? ` ${reason}` : ''})`, { retryable: true });
    } else if (!failure && wasOpen) {
      lastError ??= new GatewayError('unavailable', `the connection to ${url} closed (${code}${reason ? ` ${reason}` : ''})`, { retryable: true });
    }
    scheduleReconnect({ failure, immediate: connection.immediate === true, closeCode: code, wasOpen });
  };

  function connect(): void {
    if (state === 'closed' || state === 'failed') return;
    state = 'connecting';
    emitStatus();
    let connection: Connection | undefined;
    const handlers = {
      onOpen: () => {
        if (connection && current === connection && connection.phase === 'opening') connection.phase = 'challenge';
      },
      onMessage: (text: string | undefined, bytes: number) => {
        if (connection) onFrameText(connection, text, bytes);
      },
      onClose: (code: number, reason: string) => {
        if (connection) onSocketClose(connection, code, reason);
      },
      onError: (error: Error) => {
        if (!connection || current !== connection) return;
        if (connection.phase === 'open') log('warning', `connection error on ${url}: ${error.message}`);
        else lastError = new GatewayError('unavailable', `could not connect to ${url}: ${error.message}`, { retryable: true, cause: error });
      },
    };
    let socket: GatewaySocket;
    try {
      socket = options.createSocket(url, handlers);
    } catch (error) {
      lastError = new GatewayError('unavailable', `could not open a socket to ${url}: ${toError(error).message}`, { retryable: true, cause: error });
      scheduleReconnect({ failure: lastError });
      return;
    }
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    connection = { socket, phase: 'opening', maxPayload: GATEWAY_PRE_CONNECT_MAX_BYTES, pending: new Map(), ended, markEnded };
    current = connection;
    const opened = connection;
    opened.handshakeTimer = unref(
      setTimeout(() => {
        if (current !== opened || opened.phase === 'open') return;
        lastError = new GatewayError('timeout', `no hello-ok from ${url} within ${handshakeTimeoutMs} ms`, { retryable: true });
        log('warning', lastError.message);
        opened.socket.terminate();
      }, handshakeTimeoutMs),
    );
  }

  const ready: GatewayClient['ready'] = (readyOptions = {}) => {
    if (state === 'connected' && current?.hello) return Promise.resolve(current.hello);
    if (state === 'failed') return Promise.reject(lastError ?? new GatewayError('closed', 'the gateway client stopped'));
    if (state === 'closed') return Promise.reject(new GatewayError('closed', 'the gateway client is closed'));
    return new Promise<HelloOk>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        readyOptions.signal?.removeEventListener('abort', onAbort);
        readyWaiters = readyWaiters.filter((waiter) => waiter !== entry);
      };
      const onAbort = () => {
        cleanup();
        reject(new GatewayError('aborted', 'waiting for the gateway connection was aborted', { cause: readyOptions.signal?.reason }));
      };
      const entry = {
        resolve: (hello: HelloOk) => {
          cleanup();
          resolve(hello);
        },
        reject: (error: GatewayError) => {
          cleanup();
          reject(error);
        },
      };
      if (readyOptions.signal?.aborted) return onAbort();
      readyOptions.signal?.addEventListener('abort', onAbort, { once: true });
      if (readyOptions.timeoutMs !== undefined) {
        timer = unref(
          setTimeout(() => {
            cleanup();
            const detail = lastError ? `: ${lastError.message}` : '';
            reject(new GatewayError('timeout', `not connected to ${url} within ${readyOptions.timeoutMs} ms${detail}`, { retryable: true }));
          }, Math.min(readyOptions.timeoutMs, MAX_TIMER_MS)),
        );
      }
      readyWaiters.push(entry);
    });
  };

  const request: GatewayClient['request'] = async <T>(method: string, params?: unknown, requestOptions: GatewayRequestOptions = {}): Promise<T> => {
    const timeoutMs = requestOptions.timeoutMs ?? requestTimeoutMs;
    const started = Date.now();
    if (requestOptions.signal?.aborted) throw new GatewayError('aborted', `${method} was aborted`, { cause: requestOptions.signal.reason });
    if (state !== 'connected' || current?.phase !== 'open') {
      if (requestOptions.waitForConnection === false) throw new GatewayError('not_connected', `not connected to ${url}`, { retryable: true });
      await ready({ timeoutMs, ...(requestOptions.signal ? { signal: requestOptions.signal } : {}) });
    }
    const connection = current;
    if (!connection || connection.phase !== 'open') throw new GatewayError('not_connected', `not connected to ${url}`, { retryable: true });
    const remaining = Math.max(1, timeoutMs - (Date.now() - started));
    const id = `${role}-${++requestCounter}-${started.toString(36)}`;
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        requestOptions.signal?.removeEventListener('abort', onAbort);
        connection.pending.delete(id);
      };
      const onAbort = () => {
        cleanup();
        reject(new GatewayError('aborted', `${method} was aborted`, { cause: requestOptions.signal?.reason }));
      };
      connection.pending.set(id, {
        method,
        resolve: (payload) => {
          cleanup();
          resolve(payload as T);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      });
      requestOptions.signal?.addEventListener('abort', onAbort, { once: true });
      timer = unref(
        setTimeout(() => {
          cleanup();
          reject(new GatewayError('timeout', `${method} got no response from ${url} within ${timeoutMs} ms`, { retryable: true }));
        }, Math.min(remaining, MAX_TIMER_MS)),
      );
      try {
        sendFrame(connection, params === undefined ? { type: 'req', id, method } : { type: 'req', id, method, params });
      } catch (error) {
        cleanup();
        reject(isGatewayError(error) ? error : new GatewayError('connection_lost', `could not send ${method}: ${toError(error).message}`, { cause: error, retryable: true }));
      }
    });
  };

  const close = (): Promise<void> => {
    closePromise ??= (async () => {
      state = 'closed';
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      settleReady({ error: new GatewayError('closed', 'the gateway client is closed') });
      const connection = current;
      emitStatus();
      if (!connection) return;
      let graceTimer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => {
        graceTimer = unref(setTimeout(resolve, CLOSE_GRACE_MS));
      });
      try {
        connection.socket.close(1000, 'client closing');
      } catch {
        connection.socket.terminate();
      }
      await Promise.race([connection.ended, grace]);
      if (graceTimer) clearTimeout(graceTimer);
      if (current === connection) {
        connection.socket.terminate();
        endConnection(connection);
        connection.markEnded();
        current = undefined;
        failPending(connection, new GatewayError('closed', 'the gateway client is closed'));
      }
    })();
    return closePromise;
  };

  if (options.signal?.aborted) {
    state = 'closed';
  } else {
    options.signal?.addEventListener('abort', () => void close(), { once: true });
    connect();
  }

  return {
    url,
    status,
    hello: () => (current?.phase === 'open' ? current.hello : undefined),
    ready,
    request,
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    reconnect(reason) {
      if (state === 'closed' || state === 'failed') return;
      const connection = current;
      if (!connection) {
        if (retryTimer) {
          clearTimeout(retryTimer);
          retryTimer = undefined;
          connect();
        }
        return;
      }
      log('info', `reconnecting to ${url}: ${reason}`);
      connection.immediate = true;
      connection.socket.close(1000, reason.slice(0, 100));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
