import type { McpConfig } from './config.js';
import { createNodeConnector } from './internal/connect.js';
import type { McpOAuthOptions } from './internal/oauthSession.js';
import { createUploadStore } from './internal/uploadStore.js';
import { createRuntime } from './runtime.js';
import type { McpConnector, McpRuntime, McpRuntimeOptions } from './types.js';

export type { McpOAuthOptions, McpAuthorizationRequest } from './internal/oauthSession.js';
export type { LoginMcpServerOptions, LoginMcpServerResult } from './internal/oauthLogin.js';
export { loginMcpServer } from './internal/oauthLogin.js';
export { oauthFileName } from './internal/oauthStore.js';

export interface NodeMcpRuntimeOptions extends McpRuntimeOptions {
  /**
   * The session workspace. Binary tool output (images, resource blobs) is saved under
   * `<workspace>/uploads/` and referenced by path; without it binary items become
   * `[attachment unavailable: …]` markers.
   */
  readonly workspace?: string;
  /** Replaces the built-in stdio/HTTP connector (tests, custom transports). */
  readonly connector?: McpConnector;
  /**
   * OAuth for HTTP/SSE servers (token files in `oauth.dir`, e.g. `<config dir>/oauth`). Without
   * `oauth.authorize` the runtime never opens a browser: a server without a valid or refreshable
   * token fails with `auth_required` naming `capnode servers login <name>`.
   */
  readonly oauth?: McpOAuthOptions;
}

/**
 * Starts the MCP client runtime for one agent session: connects the agent's granted servers in
 * parallel (each within its connect timeout), lists their tools and builds the catalog. A server
 * that fails, hangs or crashes becomes a diagnostic; it never blocks or throws into the others.
 * Rejects only when `signal` aborts startup.
 *
 * @example
 * const { config } = parseMcpConfig(settings.mcp);
 * await using runtime = await createMcpRuntime(config, { agent: 'assistant', workspace: sessionDir });
 * const tools = await runtime.tools();
 * const result = await tools['everything__echo']!.execute({ message: 'hi' });
 */
export function createMcpRuntime(config: McpConfig, options: NodeMcpRuntimeOptions = {}): Promise<McpRuntime> {
  const { workspace, connector, oauth, ...rest } = options;
  return createRuntime(config, rest, {
    connector: connector ?? createNodeConnector(oauth ? { oauth } : {}),
    ...(workspace === undefined ? {} : { store: createUploadStore(workspace) }),
  });
}
