import { describe, expect, it } from 'vitest';
import { classifyConnectError } from './connectErrors.js';

const context = { url: 'ws://127.0.0.1:18789', role: 'node' as const, sentDeviceToken: false };

// Error frames as the real gateway 2026.9.6 sent them (../shared/peers/transcripts).
describe('classifyConnectError', () => {
  it('AUTH_TOKEN_MISMATCH stops with a hint to pass the token', () => {
    const error = classifyConnectError(
      {
        code: 'INVALID_REQUEST',
        message: 'unauthorized: gateway token mismatch (provide gateway auth token)',
        details: { code: 'AUTH_TOKEN_MISMATCH', authReason: 'token_mismatch', canRetryWithDeviceToken: true, recommendedNextStep: 'retry_with_device_token' },
      },
      context,
    );
    expect(error).toMatchObject({ code: 'auth_failed', retryable: false, detailCode: 'AUTH_TOKEN_MISMATCH', gatewayCode: 'INVALID_REQUEST' });
    expect(error.message).toContain('--gateway-token');
  });

  it('PROTOCOL_MISMATCH stops and names both versions', () => {
    const error = classifyConnectError(
      { code: 'INVALID_REQUEST', message: 'protocol mismatch', details: { code: 'PROTOCOL_MISMATCH', clientMinProtocol: 3, clientMaxProtocol: 3, expectedProtocol: 4 } },
      context,
    );
    expect(error).toMatchObject({ code: 'protocol_mismatch', retryable: false });
    expect(error.message).toMatch(/protocol 4; capnode speaks 4/);
  });

  it('PAIRING_REQUIRED keeps retrying and names the request to approve', () => {
    const error = classifyConnectError(
      {
        code: 'NOT_PAIRED',
        message: 'pairing required: device identity changed and must be re-approved',
        details: { code: 'PAIRING_REQUIRED', reason: 'metadata-upgrade', requestId: '43c793dd-7059-4970-a244-39c846593e15' },
      },
      { ...context, role: 'operator' },
    );
    expect(error).toMatchObject({ code: 'pairing_required', retryable: true });
    expect(error.message).toContain('openclaw devices approve 43c793dd-7059-4970-a244-39c846593e15');
  });

  it('device identity problems stop with a remedy; a stale signature is retried', () => {
    expect(classifyConnectError({ code: 'NOT_PAIRED', message: 'device identity required', details: { code: 'DEVICE_IDENTITY_REQUIRED' } }, context)).toMatchObject({ code: 'connect_rejected', retryable: false });
    const invalid = classifyConnectError({ code: 'INVALID_REQUEST', message: 'device signature invalid', details: { code: 'DEVICE_AUTH_SIGNATURE_INVALID', reason: 'device-signature' } }, context);
    expect(invalid).toMatchObject({ code: 'connect_rejected', retryable: false });
    expect(invalid.message).toContain('delete it');
    expect(classifyConnectError({ code: 'INVALID_REQUEST', message: 'device signature expired', details: { code: 'DEVICE_AUTH_SIGNATURE_EXPIRED' } }, context)).toMatchObject({ retryable: true });
  });

  it('a rejected stored device token is forgotten and retried with the shared token', () => {
    const detail = { code: 'INVALID_REQUEST', message: 'device token mismatch', details: { code: 'AUTH_DEVICE_TOKEN_MISMATCH' } };
    expect(classifyConnectError(detail, { ...context, sentDeviceToken: true })).toMatchObject({ retryable: true, detailCode: 'DEVICE_TOKEN_REJECTED' });
    expect(classifyConnectError(detail, context)).toMatchObject({ retryable: false, detailCode: 'AUTH_DEVICE_TOKEN_MISMATCH' });
  });

  it('UNAVAILABLE and retryable refusals are retried, keeping retryAfterMs', () => {
    expect(classifyConnectError({ code: 'UNAVAILABLE', message: 'gateway starting', retryable: true, retryAfterMs: 500 }, context)).toMatchObject({ code: 'unavailable', retryable: true, retryAfterMs: 500 });
    expect(classifyConnectError({ code: 'INVALID_REQUEST', message: 'invalid connect params: at /client/id: must be equal to one of the allowed values' }, context)).toMatchObject({
      code: 'connect_rejected',
      retryable: false,
    });
  });
});
