import { defineErrorClass } from '@capnode/toolkit';

/** One problem in a configuration: where (`path`, e.g. `servers[1].tool_timeout_secs`) and why. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** The one local error class of `@capnode/mcp-client`; `message` is meant for the user and names the fix. */
export class McpClientError extends defineErrorClass('McpClientError', [
  /** The configuration (or an imported file) does not validate; `issues` lists every problem. */
  'invalid_config',
  /** The runtime was closed; every call after `close()` fails with this at once. */
  'closed',
  /** Startup was aborted through the caller's signal. */
  'aborted',
  /**
   * An HTTP server needs OAuth authorization that cannot happen here (no valid or refreshable
   * token, and no browser step available); the message names `capnode servers login <name>`.
   */
  'auth_required',
  /** An OAuth flow failed: discovery, registration, the browser step, the token exchange, or the token store. */
  'auth_failed',
  /** A path to write through is a symlink or not what it must be (an `uploads/` that is a symlink); nothing was written. */
  'unsafe_path',
  /**
   * The server is this capnode host itself (it declared the runtime's own host instance): it is
   * refused at connect, never retried, so capnode's tools are never offered back to it.
   */
  'self_host',
]) {
  /** For `invalid_config`: every problem found, never just the first. */
  readonly issues: readonly ConfigIssue[];

  constructor(code: McpClientErrorCode, message: string, options?: { cause?: unknown; issues?: readonly ConfigIssue[] }) {
    super(code, message, options);
    this.issues = options?.issues ?? [];
  }
}

/** Why an MCP client operation failed. */
export type McpClientErrorCode = McpClientError['code'];

/** True when `value` is a {@link McpClientError}, across package copies and bundles. */
export function isMcpClientError(value: unknown): value is McpClientError {
  return McpClientError.is(value);
}
