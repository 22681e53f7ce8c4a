/** Why a tray operation failed. */
export type TrayErrorCode =
  /** The native tray helper cannot run here (no display, missing libraries, unsupported platform); the message says what to install. */
  | 'helper_unavailable'
  /** The native tray helper stopped or broke the protocol. */
  | 'helper_failed'
  /** No capnode host answers (attach mode), or none could be started. */
  | 'host_unreachable'
  /** The host refused the admin token. */
  | 'unauthorized'
  /** The host answered an admin request with an error. */
  | 'request_failed'
  /** No clipboard tool, browser opener or notifier exists here; the message names what to install. */
  | 'unsupported'
  /** A tool (clipboard, browser opener) ran and failed. */
  | 'failed';

/** The one local error class of `@capnode/tray`; `message` is meant for the user and names the fix. */
export class TrayError extends Error {
  override readonly name = 'TrayError';
  readonly code: TrayErrorCode;

  constructor(code: TrayErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** True when `value` is a {@link TrayError}, across package copies. */
export function isTrayError(value: unknown): value is TrayError {
  return value instanceof TrayError || (value instanceof Error && value.name === 'TrayError' && typeof (value as { code?: unknown }).code === 'string');
}
