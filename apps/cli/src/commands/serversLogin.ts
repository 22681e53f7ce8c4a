import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openBrowser } from '@capnode/host/setup';
import type { McpServerConfig } from '@capnode/mcp-client';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { interruptSignal, openSettings } from '../mcpClient.js';
import { closeNames } from '../suggest.js';
import { version } from '../version.js';

/** Where `servers login` stores tokens and the runtime reads them: `<config dir>/oauth/<server>.json`. */
function oauthDir(context: Context): string {
  return join(context.paths.home, 'oauth');
}

async function findServer(context: Context, action: string): Promise<McpServerConfig> {
  const name = context.args.positionals[2];
  if (!name) throw new CliError('usage', `usage: capnode servers ${action} <name>`);
  const extra = context.args.positionals[3];
  if (extra !== undefined) throw new CliError('usage', `unexpected argument '${extra}' — usage: capnode servers ${action} <name>`);
  const { setup, store } = await openSettings(context);
  const configured = setup.config.servers;
  const server = configured.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
  if (!server) {
    const close = closeNames(name, configured.map((candidate) => candidate.name));
    throw new CliError('usage', `no MCP server named '${name}' in ${store.path}${close.length ? ` — did you mean: ${close.join(', ')}?` : ''} (list them with: capnode servers list)`);
  }
  if (server.transport === 'stdio') throw new CliError('usage', `'${server.name}' is a stdio server; OAuth applies to http and sse servers`);
  return server;
}

/**
 * `capnode servers login <name> [--no-browser]`: the OAuth authorization-code flow with PKCE for one
 * HTTP/SSE server. Prints the authorization URL (and opens the browser), receives the redirect on a
 * loopback listener on 127.0.0.1, and stores the tokens 0600 under `<config dir>/oauth/`.
 */
export async function serversLogin(context: Context): Promise<number> {
  const server = await findServer(context, 'login');
  const { isMcpClientError } = await import('@capnode/mcp-client');
  const { loginMcpServer } = await import('@capnode/mcp-client/node');
  const noBrowser = context.args.flags.has('no-browser');
  const interrupt = interruptSignal(context, 'the login');
  let result;
  try {
    result = await loginMcpServer(server, {
      dir: oauthDir(context),
      signal: interrupt.signal,
      clientInfo: { name: 'capnode-cli', version: version() },
      authorize: ({ url }) => {
        context.err(`capnode: to authorize capnode for '${server.name}', open this URL in a browser:\n\n  ${url.href}\n\ncapnode: waiting for the authorization (Ctrl-C to cancel)…`);
        // A browser that cannot start only means the user opens the printed URL.
        if (!noBrowser) void openBrowser(url.href, { env: context.env });
      },
    });
  } catch (error) {
    if (interrupt.signal.aborted) throw new CliError('interrupted', 'interrupted', { cause: error });
    if (isMcpClientError(error)) throw new CliError('failure', `login to '${server.name}' failed: ${error.message}`, { cause: error });
    throw new CliError('failure', `login to '${server.name}' failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    interrupt.dispose();
  }
  if (context.json) {
    context.out(JSON.stringify({ server: server.name, ...result }, null, 2));
    return 0;
  }
  if (!result.authorized) {
    context.out(`'${server.name}' did not ask for authorization; it works without a token (nothing stored)`);
    return 0;
  }
  const expiry = result.expiresAt ? `, access token valid until ${result.expiresAt}` : '';
  const refresh = result.refreshable ? '; refreshed automatically' : '; no refresh token: run this again when it expires';
  context.out(`logged in to '${server.name}'${result.scope ? ` (scope: ${result.scope})` : ''}: tokens stored in ${result.tokenFile}${expiry}${refresh}`);
  return 0;
}

/** `capnode servers logout <name>`: deletes the stored tokens and client registration of one server. */
export async function serversLogout(context: Context): Promise<number> {
  const server = await findServer(context, 'logout');
  const { oauthFileName } = await import('@capnode/mcp-client/node');
  const path = join(oauthDir(context), oauthFileName(server.name));
  await rm(path, { force: true });
  context.out(`removed the stored OAuth tokens of '${server.name}' (${path})`);
  return 0;
}
