import { realpathSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import type { ClientConfigOptions, ClientId, StdioLaunch } from '@capnode/host/setup';
import { flag } from '../args.js';
import { mcpUrl, type Context } from '../context.js';
import { CliError, hostFailure } from '../errors.js';
import { ensureToken } from './token.js';
import { toolNamesFlag } from '../toolNamesFlag.js';

type ClientsModule = typeof import('@capnode/host/setup');

/**
 * A server name every client takes as it is: a JSON key, a `claude mcp add` argument, the
 * `${input:<name>-token}` of VS Code, the `mcp__<name>__<tool>` prefix (hence no `__`).
 */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function serverNameFlag(context: Context): string {
  const name = flag(context.args, 'name');
  if (name === undefined) return 'capnode';
  if (!SERVER_NAME.test(name) || name.includes('__')) {
    throw new CliError('usage', `--name must be 1-64 letters, digits, '.', '-' or '_' (no '__'), starting with a letter or digit, got ${JSON.stringify(name)}`);
  }
  return name;
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** How Claude Desktop starts this CLI: this Node and this script (resolved), with the config directory it uses. */
function stdioLaunch(context: Context): StdioLaunch {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : 'capnode';
  const home = context.env.CAPNODE_HOME;
  return { command: process.execPath, args: [script, 'mcp'], ...(home ? { env: { CAPNODE_HOME: home } } : {}) };
}

async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

/**
 * `capnode config <client> --write [--yes]`: shows the unified diff (secrets masked), asks on a
 * terminal, then merges the entry into the client's file (atomic, backup kept, other entries and
 * unknown keys untouched). A file that is not JSON is refused and left alone.
 */
async function write(context: Context, clients: ClientsModule, id: ClientId, options: ClientConfigOptions): Promise<number> {
  let preview;
  try {
    preview = await clients.previewClientConfig(id, options);
  } catch (error) {
    hostFailure(error, clients);
  }
  if (!preview.changed) {
    if (context.json) context.out(JSON.stringify({ path: preview.path, changed: false }, null, 2));
    else context.out(`${preview.path} already has this entry; nothing to do`);
    return 0;
  }
  if (!context.json) context.out(preview.diff.trimEnd());
  if (!context.args.flags.has('yes')) {
    if (!process.stdin.isTTY || !process.stderr.isTTY) {
      throw new CliError('usage', `not writing ${preview.path} without confirmation: run this on a terminal, or add --yes`);
    }
    if (!(await confirm(`${preview.created ? 'create' : 'update'} ${preview.path}? [y/N] `))) {
      context.err('capnode: nothing written');
      return 1;
    }
  }
  let written;
  try {
    written = await clients.writeClientConfig(id, { ...options, expected: preview.before });
  } catch (error) {
    hostFailure(error, clients);
  }
  const narrowed = written.narrowedFrom === undefined ? undefined : `0${written.narrowedFrom.toString(8)}`;
  if (context.json) context.out(JSON.stringify({ path: written.path, changed: written.changed, ...(written.backup ? { backup: written.backup } : {}), ...(narrowed ? { narrowedFrom: narrowed } : {}), diff: preview.diff }, null, 2));
  else {
    context.out(`wrote ${written.path}${written.backup ? ` (previous file kept as ${written.backup})` : ''}; restart the client to pick it up`);
    if (narrowed) context.out(`made ${written.path} readable by you only (it was mode ${narrowed}): it holds capnode's MCP token`);
  }
  if (written.notPrivate !== undefined) {
    context.err(
      `capnode: WARNING: ${written.path} holds capnode's MCP token but could not be made readable by you only: ${written.notPrivate}. ` +
        `Move it somewhere private, or revoke the token when others may have read it: ${clients.clientHoldsToken(id) ? `capnode token revoke ${id}` : 'capnode token rotate'}`,
    );
  }
  return 0;
}

/**
 * The token named after `client` (made when there is none yet, and the running host told), so the
 * client's calls carry its name in audit and approvals.
 */
async function clientToken(context: Context, clients: ClientsModule, client: ClientId): Promise<string> {
  await ensureToken(context);
  let minted;
  try {
    minted = await clients.ensureClientToken(context.paths, client);
  } catch (error) {
    hostFailure(error, clients);
  }
  if (minted.created) {
    context.err(`capnode: made the MCP token '${client}' for this client (capnode token list shows it; capnode token revoke ${client} ends it)`);
    const reload = await (await import('./tokenNamed.js')).reloadRunningHost(context);
    if (reload?.failure !== undefined) {
      context.err(`capnode: WARNING: the running host (pid ${reload.pid}) did not take the new token: ${reload.failure} Restart it (stop pid ${reload.pid}, then: capnode serve) before the client connects.`);
    }
  }
  return minted.token;
}

/**
 * `capnode config <client> [--write]`: a ready MCP client config for this host. Human mode explains
 * where the snippet goes; `--json` prints only the JSON so it can be piped. The snippets come from
 * `@capnode/host/setup`, the same module the dashboard uses.
 */
export async function config(context: Context): Promise<number> {
  const clients: ClientsModule = await import('@capnode/host/setup');
  const id = context.args.positionals[1];
  if (!clients.isClientId(id)) {
    throw new CliError('usage', `usage: capnode config ${clients.CLIENT_IDS.join('|')} [--write]${id ? ` (unknown client '${id}')` : ''}`);
  }
  if (context.args.positionals.length > 2) throw new CliError('usage', `unexpected argument '${context.args.positionals[2]}' — usage: capnode config ${id} [--write]`);
  if (context.args.flags.has('yes') && !context.args.flags.has('write')) throw new CliError('usage', '--yes applies to --write only');
  const client: ClientId = id;
  const serverName = serverNameFlag(context);
  const toolNames = toolNamesFlag(context.args);
  const url = mcpUrl(context);
  const options: ClientConfigOptions = {
    url,
    token: clients.clientHoldsToken(client) ? await clientToken(context, clients, client) : await ensureToken(context),
    serverName,
    env: context.env,
    ...(toolNames === undefined ? {} : { toolNames }),
    ...(client === 'claude-desktop' ? { launch: stdioLaunch(context) } : {}),
  };
  if (context.args.flags.has('write')) return write(context, clients, client, options);
  const snippet = clients.clientSnippet(client, options);
  const json = JSON.stringify(snippet.snippet, null, 2);
  if (context.json) {
    context.out(json);
    return 0;
  }
  const lines = snippet.instructions.map((line) => `# ${line}`);
  if (snippet.command) lines.splice(1, 0, snippet.command.map(shellQuote).join(' '), '');
  lines.push('', json);
  if (client === 'claude-desktop') lines.push('', `# HTTP alternative (clients that accept a URL): ${url} with header Authorization: Bearer ${options.token}`);
  lines.push('', `# or let capnode merge it into the file (diff first, backup kept): capnode config ${client} --write`);
  context.out(lines.join('\n'));
  return 0;
}
