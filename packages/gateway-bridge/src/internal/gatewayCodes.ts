import type { CommandFailure } from '@capnode/capabilities';

/** capnode failure codes whose gateway spelling is not just the code upper-cased. */
const GATEWAY_CODES: Readonly<Record<string, string>> = {
  consent_required: 'PERMISSION_REQUIRED',
  payload_too_large: 'PAYLOAD_TOO_LARGE',
  unavailable: 'UNAVAILABLE',
};

/** A command's own gateway code (`data.code`, e.g. location's `LOCATION_DISABLED`) passes through when it looks like one. */
const OWN_CODE = /^[A-Z][A-Z0-9_]{1,63}$/;

/**
 * The gateway error code of a failed command: `data.code` when the command gave an upper-case code
 * of its own (OpenClaw's command-specific codes such as `LOCATION_DISABLED` or `TIMEOUT`), else the
 * capnode code in the gateway's spelling (`consent_required` → `PERMISSION_REQUIRED`, `unavailable`
 * → `UNAVAILABLE`, `payload_too_large` → `PAYLOAD_TOO_LARGE`, others upper-cased).
 */
export function gatewayErrorCode(error: CommandFailure['error']): string {
  const own = error.data?.code;
  if (typeof own === 'string' && OWN_CODE.test(own)) return own;
  return GATEWAY_CODES[error.code] ?? error.code.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}
