import { defineErrorClass } from '@capnode/toolkit';

/**
 * The one local error class of `@capnode/capabilities`.
 *
 * Capabilities throw it (or return {@link fail}) for an expected, user-facing failure; its `message`
 * is shown to the caller. Any other thrown value is reported as `internal` with a generic message, so
 * internal details never reach a remote caller.
 */
export class CapabilityError extends defineErrorClass('CapabilityError', [
  'unknown_command',
  'invalid_arguments',
  'denied',
  'approval_timeout',
  'approval_pending',
  'timeout',
  'cancelled',
  'unsupported',
  'unavailable',
  'consent_required',
  'payload_too_large',
  'busy',
  'failed',
  'internal',
]) {
  readonly data: Record<string, unknown> | undefined;

  constructor(code: CapabilityErrorCode, message: string, options?: { cause?: unknown; data?: Record<string, unknown> }) {
    super(code, message, options);
    this.data = options?.data;
  }
}

/** Machine-readable reasons an invocation can fail; stable across transports. */
export type CapabilityErrorCode = CapabilityError['code'];

/** True when `value` is a {@link CapabilityError}, across package copies and bundles. */
export function isCapabilityError(value: unknown): value is CapabilityError {
  return CapabilityError.is(value);
}
