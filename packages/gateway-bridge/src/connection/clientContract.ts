import type { GatewayClientId, GatewayClientMode, GatewayEventFrame, GatewayRole, HelloOk } from '@capnode/protocol/gateway';
import type { LogLevel } from '@capnode/toolkit';
import type { BackoffOptions } from './backoff.js';
import type { DeviceIdentity, DeviceTokenStore } from './identity.js';
import type { GatewaySocketFactory } from './socket.js';

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

export type GatewayLogLevel = LogLevel;

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
