import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRuntimeState } from '@capnode/host/setup';
import { adminEndpoints, readToken, type Context } from '../context.js';
import { CliError, isCliError } from '../errors.js';
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
    case 'rotate':
      return rotate(context);
    case 'add':
    case 'list':
    case 'revoke':
      return (await import('./tokenNamed.js')).namedToken(context, action);
    default:
      throw new CliError('usage', `usage: capnode token show|path|rotate|add <name>|list|revoke <name>${action ? ` (unknown action '${action}')` : ''}`);
  }
}

/** How long `token rotate` waits for the running host to take the new token. */
const ROTATE_TIMEOUT_MS = 5_000;

/** A live host that holds the config directory's lock (`run/host.lock`) but published no `host.json` yet (starting). */
function lockHolder(context: Context): { pid: number } | undefined {
  try {
    const lock = JSON.parse(readFileSync(join(context.paths.runDir, 'host.lock'), 'utf8')) as { pid?: unknown; adminUrl?: unknown };
    // With admin routes but no MCP URL the host runs without the MCP listener: no token to revoke.
    if (typeof lock.pid !== 'number' || lock.adminUrl !== undefined) return undefined;
    process.kill(lock.pid, 0);
    return { pid: lock.pid };
  } catch {
    return undefined;
  }
}

/**
 * `capnode token rotate`: through the running host's admin route when one runs (it writes the new
 * token and accepts only that one from then on), else rewrites the file. When a host runs but does
 * not take the new token (unreachable, refused the admin token), the file is rotated anyway and the
 * command says plainly that the host may still accept the old token until it restarts (exit 1).
 */
async function rotate(context: Context): Promise<number> {
  const path = context.paths.mcpToken;
  const running = readRuntimeState(context.paths.runtime);
  const update = `capnode: update your MCP client configs (capnode config claude|claude-desktop|cursor|vscode); the token is in ${path}`;
  if (running?.url) {
    const endpoint = { ...adminEndpoints(context)[0]!, url: running.adminUrl };
    let failure: string | undefined;
    const deadline = AbortSignal.timeout(ROTATE_TIMEOUT_MS);
    try {
      const result = await send(endpoint, new URL('token/rotate', endpoint.url).href, { method: 'POST', body: '{}', signal: deadline });
      if (result.status !== 200) throw await unexpectedStatus(endpoint, result);
      await readText(result.response);
    } catch (error) {
      if (!isCliError(error)) throw error;
      if (deadline.aborted) {
        // The request may still reach the host (it is stalled, not gone): rotating here as well would leave two tokens in play.
        context.err(
          `capnode: WARNING: the running host (pid ${running.pid}, ${running.url}) did not confirm the rotation within ${ROTATE_TIMEOUT_MS / 1000} s; nothing was changed here. ` +
            `It MAY STILL ACCEPT THE OLD TOKEN, and may rotate when it gets to the request — restart it (stop pid ${running.pid}, then: capnode serve) and run capnode token rotate again.`,
        );
        return 1;
      }
      failure = error.message;
    }
    if (failure === undefined) {
      context.err(`capnode: rotated; the running host at ${running.url} now accepts only the new token (the old one is refused from now on)`);
      context.out(readToken(path) ?? '');
      context.err(update);
      return 0;
    }
    const { rotateToken } = await import('@capnode/mcp-server/node');
    await rotateToken(path);
    context.out(readToken(path) ?? '');
    context.err(
      `capnode: WARNING: the token file is rotated, but the running host (pid ${running.pid}, ${running.url}) did not take the new token: ${failure} ` +
        `Until that host restarts it MAY STILL ACCEPT THE OLD TOKEN — restart it (stop pid ${running.pid}, then: capnode serve).`,
    );
    context.err(update);
    return 1;
  }
  const { rotateToken } = await import('@capnode/mcp-server/node');
  await rotateToken(path);
  context.out(readToken(path) ?? '');
  const starting = lockHolder(context);
  if (starting) {
    context.err(
      `capnode: WARNING: the token file is rotated, but a host (pid ${starting.pid}) holds this config directory without publishing its URL (starting, or MCP off): ` +
        `if it already read the old token it MAY STILL ACCEPT IT until it restarts — restart it (stop pid ${starting.pid}, then: capnode serve).`,
    );
    context.err(update);
    return 1;
  }
  context.err('capnode: rotated (no host is running; the next start uses the new token)');
  context.err(update);
  return 0;
}
