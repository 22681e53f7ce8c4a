import { GATEWAY_PROTOCOL_VERSION, gatewayErrorDetailCode, type GatewayErrorShape, type GatewayRole } from '@capnode/protocol/gateway';
import { GatewayError } from '../errors.js';

interface ConnectContext {
  readonly url: string;
  readonly role: GatewayRole;
  /** The refused connect presented a stored device token. */
  readonly sentDeviceToken: boolean;
}

const REJECTED_DEVICE_AUTH = new Set([
  'DEVICE_AUTH_SIGNATURE_INVALID',
  'DEVICE_AUTH_NONCE_MISMATCH',
  'DEVICE_AUTH_NONCE_REQUIRED',
  'DEVICE_AUTH_DEVICE_ID_MISMATCH',
  'DEVICE_AUTH_PUBLIC_KEY_INVALID',
  'DEVICE_AUTH_INVALID',
]);

function detailString(details: unknown, key: string): string | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const value = (details as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Turns the gateway's refusal of `connect` into a {@link GatewayError}: `retryable` decides between
 * reconnecting and stopping, and the message tells the user what to do.
 */
export function classifyConnectError(error: GatewayErrorShape, context: ConnectContext): GatewayError {
  const detailCode = gatewayErrorDetailCode(error);
  const base = {
    gatewayCode: error.code,
    ...(detailCode ? { detailCode } : {}),
    details: error.details,
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  };
  const where = `The gateway at ${context.url}`;
  switch (detailCode) {
    case 'AUTH_TOKEN_MISMATCH':
      return new GatewayError('auth_failed', `${where} rejected the token (AUTH_TOKEN_MISMATCH). Pass the gateway's token (gateway.auth.token in its openclaw.json, or OPENCLAW_GATEWAY_TOKEN on the gateway host) with --gateway-token.`, base);
    case 'AUTH_TOKEN_MISSING':
    case 'AUTH_REQUIRED':
    case 'AUTH_UNAUTHORIZED':
      return new GatewayError('auth_failed', `${where} needs its token (${detailCode}). Pass it with --gateway-token.`, base);
    case 'AUTH_PASSWORD_MISMATCH':
    case 'AUTH_PASSWORD_MISSING':
      return new GatewayError('auth_failed', `${where} uses password auth and refused the password (${detailCode}); pass the gateway's password.`, base);
    case 'AUTH_DEVICE_TOKEN_MISMATCH':
      // The stored device token is stale; the caller forgets it and retries with the shared token.
      return new GatewayError('auth_failed', `${where} no longer accepts this device's token (AUTH_DEVICE_TOKEN_MISMATCH).`, {
        ...base,
        detailCode: context.sentDeviceToken ? 'DEVICE_TOKEN_REJECTED' : detailCode,
        retryable: context.sentDeviceToken,
      });
    case 'AUTH_RATE_LIMITED':
      return new GatewayError('auth_failed', `${where} is rate-limiting failed logins (AUTH_RATE_LIMITED); check the token${error.retryAfterMs !== undefined ? '; retrying later' : ''}.`, {
        ...base,
        retryable: error.retryAfterMs !== undefined,
      });
    case 'PROTOCOL_MISMATCH': {
      const expected = (error.details as { expectedProtocol?: unknown } | undefined)?.expectedProtocol;
      return new GatewayError('protocol_mismatch', `${where} speaks protocol ${typeof expected === 'number' ? expected : 'another version'}; capnode speaks ${GATEWAY_PROTOCOL_VERSION}. Update capnode or the gateway so they share a protocol version.`, base);
    }
    case 'PAIRING_REQUIRED': {
      const requestId = detailString(error.details, 'requestId');
      const reason = detailString(error.details, 'reason');
      return new GatewayError(
        'pairing_required',
        `${where} waits for its owner to approve this device${context.role === 'operator' ? ' as an operator' : ''}${reason ? ` (${reason})` : ''}${requestId ? `: run \`openclaw devices approve ${requestId}\` on the gateway host or approve it in the Control UI` : ''}. capnode keeps retrying until it is approved.`,
        { ...base, retryable: true },
      );
    }
    case 'DEVICE_IDENTITY_REQUIRED':
      return new GatewayError('connect_rejected', `${where} requires a device identity for role ${context.role}.`, base);
    case 'DEVICE_AUTH_SIGNATURE_EXPIRED':
      return new GatewayError('connect_rejected', `${where} says the device signature is stale (DEVICE_AUTH_SIGNATURE_EXPIRED); check that this machine's clock is right.`, { ...base, retryable: true });
    default:
      break;
  }
  if (detailCode && REJECTED_DEVICE_AUTH.has(detailCode)) {
    return new GatewayError('connect_rejected', `${where} rejected the device identity (${detailCode}); if the identity file was edited or copied from another machine, delete it so a new one is created, then approve the device again.`, base);
  }
  if (error.retryable === true || error.code === 'UNAVAILABLE' || error.retryAfterMs !== undefined) {
    return new GatewayError('unavailable', `${where} is not accepting connections right now: ${error.message}`, { ...base, retryable: true });
  }
  return new GatewayError('connect_rejected', `${where} refused the connection: ${error.message} (${detailCode ?? error.code}).`, base);
}
