import { generateToken, loadOrCreateToken, type McpHttpServer } from '@capnode/mcp-server/node';
import type { HostContext } from '../../context/hostContext.js';
import type { ListenFn } from './mcpListener.js';
import type { RuntimeFiles } from '../../config/runtimeFiles.js';

export interface AdminOnlyOptions {
  readonly context: HostContext;
  readonly listen: ListenFn;
  readonly runtime: RuntimeFiles;
}

/** Where the admin routes of `server` are served. */
export function adminUrlOf(server: McpHttpServer): string {
  return new URL('/_capnode/', server.url).href;
}

/**
 * Opens a loopback listener for the admin routes only (its MCP endpoint takes a random token nobody
 * holds) and publishes it in `runFile`, so `capnode approvals` answers a host without the MCP
 * listener. A failure is logged: the host serves on, its exec approvals time out as denied.
 */
export async function openAdminOnly(options: AdminOnlyOptions, runFile: string, kind: 'stdio' | 'node'): Promise<McpHttpServer | undefined> {
  let admin: McpHttpServer;
  try {
    const adminToken = (await loadOrCreateToken(options.context.paths.adminToken)).token;
    options.context.logging.knownSecrets.add(adminToken);
    admin = await options.listen(0, '127.0.0.1', generateToken(), adminToken);
  } catch (error) {
    options.context.logging.log('warning', `approvals listener failed (${(error as Error).message}); exec approvals of this ${kind} host cannot be answered and time out as denied`);
    return undefined;
  }
  await options.runtime.publish(runFile, { kind, adminUrl: adminUrlOf(admin) });
  return admin;
}
