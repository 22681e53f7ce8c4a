import { existsSync } from 'node:fs';
import { readRuntimeState } from '@capnode/host/paths';
import { adminEndpoints, readToken, type Context } from '../context.js';
import { CliError } from '../errors.js';
import { readText, send, unexpectedStatus } from '../http.js';

/**
 * The MCP token, created (32 random bytes, 0600) when the host never ran yet, so a client can be
 * configured before the first start.
 */
export async function ensureToken(context: Context): Promise<string> {
  const existing = readToken(context.paths.mcpToken);
  if (existing !== undefined) return existing;
  const { loadOrCreateToken } = await import('@capnode/mcp-server/node');
  const { token, created } = await loadOrCreateToken(context.paths.mcpToken);
  if (created) context.err(`capnode: created a new MCP token in ${context.paths.mcpToken}`);
  return token;
}

/** `capnode token show|path|rotate`. */
export async function token(context: Context): Promise<number> {
  const action = context.args.positionals[1];
  const path = context.paths.mcpToken;
  switch (action) {
    case 'path':
      context.out(path);
      if (!existsSync(path)) context.err(`capnode: ${path} does not exist yet; capnode serve (or capnode token show) creates it`);
      return 0;
    case 'show':
      context.out(await ensureToken(context));
      return 0;
    case 'rotate': {
      const running = readRuntimeState(context.paths.runtime);
      if (running?.url) {
        const endpoint = { ...adminEndpoints(context)[0]!, url: running.adminUrl };
        const result = await send(endpoint, new URL('token/rotate', endpoint.url).href, { method: 'POST', body: '{}' });
        if (result.status !== 200) throw await unexpectedStatus(endpoint, result);
        await readText(result.response);
        context.err(`capnode: rotated; the running host at ${running.url} now accepts only the new token`);
      } else {
        const { rotateToken } = await import('@capnode/mcp-server/node');
        await rotateToken(path);
        context.err('capnode: rotated (no host is running; the next start uses the new token)');
      }
      context.out(readToken(path) ?? '');
      context.err(`capnode: update your MCP client configs (capnode config claude|claude-desktop|cursor|vscode); the token is in ${path}`);
      return 0;
    }
    default:
      throw new CliError('usage', `usage: capnode token show|path|rotate${action ? ` (unknown action '${action}')` : ''}`);
  }
}
