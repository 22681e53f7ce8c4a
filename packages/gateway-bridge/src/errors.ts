import { defineErrorClass } from '@capnode/toolkit';

export interface GatewayErrorOptions {
  readonly cause?: unknown;
  /** `error.code` of the gateway's response, e.g. `INVALID_REQUEST`. */
  readonly gatewayCode?: string;
  /** `error.details.code`, e.g. `AUTH_TOKEN_MISMATCH`. */
  readonly detailCode?: string;
  readonly details?: unknown;
  readonly retryable?: boolean;
  readonly retryAfterMs?: number;
}

/**
 * The one local error class of `@capnode/gateway-bridge`. Its `message` says what happened and,
 * for configuration problems, what to do; `gatewayCode` / `detailCode` carry the gateway's own codes.
 */
export class GatewayError extends defineErrorClass('GatewayError', [
  /** The gateway refused the shared token or password; fix the configuration (not retried). */
  'auth_failed',
  /** The gateway speaks another protocol version (not retried). */
  'protocol_mismatch',
  /** The gateway refused the handshake for another non-retryable reason (not retried). */
  'connect_rejected',
  /** The device (or a role of it) waits for the gateway owner's approval; retried until approved. */
  'pairing_required',
  /** The gateway is unreachable or answered with a retryable failure. */
  'unavailable',
  /** A request needed a connection and there was none. */
  'not_connected',
  /** The connection dropped while a request was waiting for its response. */
  'connection_lost',
  /** The gateway answered a request with `ok: false`; see `gatewayCode` / `detailCode`. */
  'request_failed',
  'timeout',
  /** A frame exceeds the size the gateway accepts (64 KiB before `hello-ok`, `policy.maxPayload` after). */
  'payload_too_large',
  /** The gateway sent something protocol 4 does not allow. */
  'invalid_response',
  /** The device identity file cannot be read, parsed or written. */
  'identity',
  'aborted',
  'closed',
]) {
  readonly gatewayCode: string | undefined;
  readonly detailCode: string | undefined;
  readonly details: unknown;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: GatewayErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(code, message, options);
    this.gatewayCode = options.gatewayCode;
    this.detailCode = options.detailCode;
    this.details = options.details;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Machine-readable reasons a gateway operation fails; stable for the host, the CLI and tests. */
export type GatewayErrorCode = GatewayError['code'];

/** True when `value` is a {@link GatewayError}, across package copies and bundles. */
export function isGatewayError(value: unknown): value is GatewayError {
  return GatewayError.is(value);
}
