import { readRuntimeState } from '@capnode/host/setup';
import { adminEndpoints, type Context } from '../context.js';
import { CliError, hostFailure, isCliError } from '../errors.js';
import { readText, send, unexpectedStatus } from '../http.js';

type SetupModule = typeof import('@capnode/host/setup');

/** How long `token add|revoke` waits for the running host to reread the tokens. */
const RELOAD_TIMEOUT_MS = 5_000;

/**
 * Tells the running host (if any) to reread the client tokens; `undefined` when it did (or none
 * runs), else why not.
 */
export async function reloadRunningHost(context: Context): Promise<{ url: string; pid: number; failure?: string } | undefined> {
  const running = readRuntimeState(context.paths.runtime);
  if (!running?.url) return undefined;
  const endpoint = { ...adminEndpoints(context)[0]!, url: running.adminUrl };
  try {
    const result = await send(endpoint, new URL('token/reload', endpoint.url).href, { method: 'POST', body: '{}', signal: AbortSignal.timeout(RELOAD_TIMEOUT_MS) });
    if (result.status !== 200) throw await unexpectedStatus(endpoint, result);
    await readText(result.response);
    return { url: running.url, pid: running.pid };
  } catch (error) {
    if (!isCliError(error)) throw error;
    return { url: running.url, pid: running.pid, failure: error.message };
  }
}

function nameArgument(context: Context, setup: SetupModule, action: string): string {
  const name = context.args.positionals[2];
  if (name === undefined || context.args.positionals.length > 3) throw new CliError('usage', `usage: capnode token ${action} <name>`);
  if (!setup.isTokenName(name)) {
    throw new CliError('usage', `a token name is 1-64 letters, digits, '.', '-' or '_', starting with a letter or digit; got ${JSON.stringify(name)}`);
  }
  return name;
}

/** `capnode token add <name>|list|revoke <name>`: the named client tokens. */
export async function namedToken(context: Context, action: 'add' | 'list' | 'revoke'): Promise<number> {
  const setup: SetupModule = await import('@capnode/host/setup');
  if (action === 'list') return list(context, setup);
  const name = nameArgument(context, setup, action);
  if (action === 'add') {
    let token: string;
    try {
      token = await setup.addClientToken(context.paths, name);
    } catch (error) {
      hostFailure(error, setup);
    }
    context.out(token);
    context.err(`capnode: made the token '${name}'; it is shown this once (capnode token list names it, never shows it). Calls made with it carry '${name}' in audit and approvals.`);
    return reportReload(context, await reloadRunningHost(context), `accepts '${name}'`);
  }
  let removed: boolean;
  try {
    removed = await setup.revokeClientToken(context.paths, name);
  } catch (error) {
    hostFailure(error, setup, 'usage');
  }
  if (!removed) throw new CliError('failure', `no token named '${name}' (capnode token list shows them)`);
  context.err(`capnode: revoked the token '${name}'`);
  return reportReload(context, await reloadRunningHost(context), `refuses '${name}' from now on`);
}

function reportReload(context: Context, reload: Awaited<ReturnType<typeof reloadRunningHost>>, what: string): number {
  if (reload === undefined) return 0;
  if (reload.failure === undefined) {
    context.err(`capnode: the running host at ${reload.url} ${what}`);
    return 0;
  }
  context.err(
    `capnode: WARNING: the token file is changed, but the running host (pid ${reload.pid}, ${reload.url}) did not reread it: ${reload.failure} ` +
      `Until it does (restart it: stop pid ${reload.pid}, then capnode serve) it keeps its old tokens.`,
  );
  return 1;
}

function list(context: Context, setup: SetupModule): number {
  if (context.args.positionals.length > 2) throw new CliError('usage', 'usage: capnode token list [--json]');
  let tokens;
  const warnings: string[] = [];
  try {
    tokens = setup.listClientTokens(context.paths, { onWarning: (message) => warnings.push(message) });
  } catch (error) {
    hostFailure(error, setup);
  }
  // Entries of mcp-tokens.json the host refuses, named (never their token), on stderr and in --json.
  for (const warning of warnings) context.err(`capnode: WARNING: ${warning}`);
  if (context.json) {
    context.out(JSON.stringify({ tokens, ...(warnings.length > 0 ? { warnings } : {}) }, null, 2));
    return 0;
  }
  if (tokens.length === 0) {
    context.out('no MCP tokens yet (capnode serve or capnode token show makes the default one)');
    return 0;
  }
  const width = Math.max(4, ...tokens.map((token) => token.name.length));
  context.out(`${'NAME'.padEnd(width)}  ${'CREATED'.padEnd(24)}  LAST USED`);
  for (const token of tokens) context.out(`${token.name.padEnd(width)}  ${token.created.padEnd(24)}  ${token.lastUsed ?? 'never'}`);
  return 0;
}
