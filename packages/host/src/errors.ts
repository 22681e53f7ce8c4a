import { defineErrorClass } from '@capnode/toolkit';

/** The one local error class of `@capnode/host`; `message` is meant for the user and names the fix. */
export class HostError extends defineErrorClass('HostError', [
  /** `settings.json` is not valid JSON or does not match the schema. */
  'invalid_settings',
  /** A file in the config directory could not be read or written. */
  'io',
  /** A file or directory of the config directory is a symlink, another user's, or readable by others (a secret); the message names it and the fix. */
  'insecure_file',
  /** Another host already runs on this config directory; the message names its pid and URL. */
  'locked',
  /** Another process held `settings.json.lock` past the update's deadline; the message names the lock and its pid. Nothing was written. */
  'settings_locked',
  /** The MCP listener could not start (port in use, bad address). */
  'listen_failed',
  /** Gateway node mode could not start (bad gateway URL, unreadable identity file). */
  'gateway_failed',
  /** Pairing was asked for before this machine's gateway node ever connected (no node identity file yet); the message names the fix. */
  'no_node_identity',
  /** The gateway could not be reached, or refused the operator connection; `cause` holds why. */
  'gateway_unreachable',
  /** The gateway refused or failed approving the pairing, or listing its gateway nodes; `cause` holds why. */
  'pairing_failed',
  /** The caller's signal ended the operation. */
  'aborted',
  /** A part of the host that is not running was asked for (the dashboard when it is off or failed to start). */
  'unavailable',
  /** The host was closed. */
  'closed',
  /** An MCP client's config file is not JSON, or its server section has the wrong shape; the file was not changed. */
  'invalid_config',
  /** A file changed between showing the change and writing it; nothing was written. */
  'conflict',
  /** A login service file cannot carry a value (a control character, a relative program, a bad environment name, `%` for Task Scheduler); nothing was written. */
  'invalid_service',
  /** One server-sent event grew past the reader's bound; the stream is abandoned (reconnect for a fresh snapshot). */
  'event_too_large',
]) {}

/** Why a host operation failed. */
export type HostErrorCode = HostError['code'];

/** True when `value` is a {@link HostError}, across package copies and bundles. */
export function isHostError(value: unknown): value is HostError {
  return HostError.is(value);
}
