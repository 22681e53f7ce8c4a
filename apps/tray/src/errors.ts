import { defineErrorClass } from '@capnode/toolkit';

/** The one local error class of `@capnode/tray`; `message` is meant for the user and names the fix. */
export class TrayError extends defineErrorClass('TrayError', [
  /** The native tray helper cannot run here (no display, missing libraries, unsupported platform); the message says what to install. */
  'helper_unavailable',
  /** The native tray helper stopped or broke the protocol. */
  'helper_failed',
  /** No capnode host answers (attach mode), or none could be started. */
  'host_unreachable',
  /** The host refused the admin token. */
  'unauthorized',
  /** The host answered an admin request with an error. */
  'request_failed',
  /** No clipboard tool, browser opener or notifier exists here; the message names what to install. */
  'unsupported',
  /** A tool (clipboard, browser opener) ran and failed. */
  'failed',
]) {}

/** Why a tray operation failed. */
export type TrayErrorCode = TrayError['code'];

/** True when `value` is a {@link TrayError}, across package copies and bundles. */
export function isTrayError(value: unknown): value is TrayError {
  return TrayError.is(value);
}
