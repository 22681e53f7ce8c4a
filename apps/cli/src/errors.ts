import { defineErrorClass } from '@capnode/toolkit';

/** Process exit codes; stable so scripts can branch on them. */
export const ExitCode = {
  ok: 0,
  /** The tool reported an error, the tool does not exist, or the host refused the request. */
  failure: 1,
  /** Bad command line: unknown flag, missing value, invalid JSON. */
  usage: 2,
  /** No host answered at the URL. */
  unreachable: 3,
  /** The host refused the token (HTTP 401). */
  unauthorized: 4,
  /** Interrupted with Ctrl-C. */
  interrupted: 130,
} as const;

/** The one local error class of the CLI: `message` is printed as is and should name the fix. */
export class CliError extends defineErrorClass('CliError', ['ok', 'failure', 'usage', 'unreachable', 'unauthorized', 'interrupted']) {
  get exitCode(): number {
    return ExitCode[this.code];
  }
}

/** Why a CLI command failed; each code is a process exit code ({@link ExitCode}). */
export type CliErrorCode = CliError['code'];

/**
 * True for a CliError from any copy of this module. The fast path (dist/bin.js) and the lazily
 * imported commands (dist/commands/*.mjs) are separate bundles, each with its own copy of the class,
 * so `instanceof` cannot tell; the registered brand can.
 */
export function isCliError(value: unknown): value is CliError {
  return CliError.is(value);
}

/**
 * A `HostError` thrown by a host entry that does not export the guard (`/setup`, `/settings`: the
 * guard is the root entry's, which loads the whole host): the same check as `isHostError`.
 */
function isHostErrorLike(value: unknown): value is Error {
  return value instanceof Error && value.name === 'HostError' && typeof (value as { code?: unknown }).code === 'string';
}

/**
 * Rethrows a host failure (a bad settings file, a listener or gateway configuration that cannot work)
 * as a CLI error carrying the host's message, which names the file, key or fix; anything else as is.
 */
export function hostFailure(error: unknown, host: object, code: CliErrorCode = 'failure'): never {
  const isHostError = (host as { isHostError?: (value: unknown) => value is Error }).isHostError ?? isHostErrorLike;
  if (isHostError(error)) throw new CliError(code, error.message, { cause: error });
  throw error;
}
