import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { hostSelfIdentity, readRuntimeState } from '@capnode/host/setup';
import type { McpServerEntry } from '@capnode/host/settings';
import type { McpConfig, McpServerConfig, McpTool, ServerDiagnostic } from '@capnode/mcp-client';
import { collectSecrets, createSecretScrubber, redactServerConfig } from '@capnode/mcp-client/redact';
import { flag, flagValues } from '../args.js';
import type { Context } from '../context.js';
import { CliError, hostFailure } from '../errors.js';
import { interruptSignal, openLocalRuntime, openSettings } from '../mcpClient.js';
import { formatToolRows } from '../output.js';
import { closeNames } from '../suggest.js';

const USAGE = `usage: capnode servers list | add <name> (--command <cmd> [--args '<json array>' | -- <args…>] | --url <url>) [--env K=V …] [--header K=V …] [--transport stdio|sse|http] [--cwd <dir>] | remove <name> | test [<name>…] | login <name> [--no-browser] | logout <name> | import <file> | reexport on|off`;

/** Flags only `servers add` takes. */
const ADD_FLAGS = ['command', 'args', 'url', 'env', 'header', 'transport', 'cwd'];

/** `capnode servers list|add|remove|test|login|logout|import|reexport`: the MCP servers whose tools capnode imports. */
export async function servers(context: Context): Promise<number> {
  const action = context.args.positionals[1];
  if (action !== 'add') {
    const misplaced = ADD_FLAGS.find((name) => context.args.flags.has(name));
    if (misplaced) throw new CliError('usage', `--${misplaced} applies to capnode servers add only — ${USAGE}`);
  }
  switch (action) {
    case 'list':
    case undefined:
      expectArgs(context, 2);
      return list(context);
    case 'add':
      return add(context);
    case 'remove':
      expectArgs(context, 3);
      return remove(context);
    case 'test':
      return test(context);
    case 'login':
    case 'logout':
      return (await import('./serversLogin.js'))[action === 'login' ? 'serversLogin' : 'serversLogout'](context);
    case 'import':
      expectArgs(context, 3);
      return importFile(context);
    case 'reexport':
      expectArgs(context, 3);
      return reexport(context);
    default:
      throw new CliError('usage', `unknown action '${action}' — ${USAGE}`);
  }
}

function expectArgs(context: Context, count: number): void {
  const extra = context.args.positionals[count];
  if (extra !== undefined) throw new CliError('usage', `unexpected argument '${extra}' — ${USAGE}`);
  if (count === 3 && context.args.positionals[2] === undefined) throw new CliError('usage', USAGE);
}

/** A running host keeps the servers it started with; say so after a change. */
function restartHint(context: Context): void {
  const running = readRuntimeState(context.paths.runtime);
  if (running?.url) context.err(`capnode: the running host (pid ${running.pid}) keeps its current servers; restart capnode serve to apply this`);
}

function describeTarget(server: McpServerConfig, scrub: (text: string) => string): string {
  const target = server.transport === 'stdio' ? [server.command ?? '', ...server.args].map(quoteArg).join(' ') : (server.url ?? '');
  return scrub(target);
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

async function list(context: Context): Promise<number> {
  const { setup, store } = await openSettings(context);
  const servers = setup.config.servers;
  const scrub = createSecretScrubber(collectSecrets(servers));
  if (context.json) {
    const redacted = servers.map((server) => {
      const safe = redactServerConfig(server);
      return { ...safe, ...(safe.url === undefined ? {} : { url: scrub(safe.url) }), args: safe.args.map(scrub) };
    });
    context.out(JSON.stringify({ settings: store.path, reexport: setup.reexport, agent: setup.agent, servers: redacted }, null, 2));
    return 0;
  }
  if (servers.length === 0) {
    context.out(`no MCP servers configured in ${store.path}\nadd one: capnode servers add <name> --command <cmd> [-- <args…>]   or   capnode servers add <name> --url <url>`);
    return 0;
  }
  const width = Math.min(30, Math.max(4, ...servers.map((server) => server.name.length)));
  const lines = [`${'NAME'.padEnd(width)}  TRANSPORT  ENABLED  TARGET`];
  for (const server of servers) {
    lines.push(`${server.name.padEnd(width)}  ${server.transport.padEnd(9)}  ${(server.enabled ? 'yes' : 'no').padEnd(7)}  ${describeTarget(server, scrub)}`);
    const safe = redactServerConfig(server);
    for (const [label, record] of [['env', safe.env], ['headers', safe.headers]] as const) {
      const entries = Object.entries(record);
      if (entries.length > 0) lines.push(`${' '.repeat(width + 2)}${label}: ${entries.map(([key, value]) => `${key}=${value}`).join(', ')}`);
    }
  }
  lines.push(
    '',
    `${servers.length} server${servers.length === 1 ? '' : 's'} in ${store.path}`,
    `re-export through the host: ${setup.reexport ? 'on' : 'off (turn on: capnode servers reexport on)'}`,
  );
  context.out(lines.join('\n'));
  return 0;
}

function keyValues(context: Context, name: 'env' | 'header'): Record<string, string> | undefined {
  const values = flagValues(context.args, name);
  if (values.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const value of values) {
    const match = name === 'env' ? /^([^=]+)=(.*)$/s.exec(value) : /^([^=:\s]+)\s*[=:]\s*(.*)$/s.exec(value);
    if (!match) throw new CliError('usage', `--${name} expects ${name === 'env' ? 'NAME=value' : 'Name=value (or "Name: value")'}; got a value without ${name === 'env' ? "'='" : "'=' or ':'"}`);
    out[match[1]!.trim()] = match[2]!;
  }
  return out;
}

function parseArgsFlag(raw: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new CliError('usage', `--args is not valid JSON (${(error as Error).message}); expected a JSON array of strings, e.g. --args '["-y","@modelcontextprotocol/server-everything"]', or put the arguments after --`);
  }
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new CliError('usage', `--args must be a JSON array of strings, e.g. --args '["-y","@modelcontextprotocol/server-everything"]'`);
  }
  return value as string[];
}

/** The server entry `servers add` writes, from its flags; validation is left to the settings schema. */
function entryFromFlags(context: Context): McpServerEntry {
  const { args } = context;
  const dashArgs = args.rest;
  const before = args.positionals.slice(0, args.positionals.length - dashArgs.length);
  const name = before[2];
  if (!name) throw new CliError('usage', `capnode servers add needs a server name — ${USAGE}`);
  const stray = before.slice(3);
  if (stray.length > 0) throw new CliError('usage', `unexpected argument '${stray[0]}' — put server arguments after -- (capnode servers add ${name} --command <cmd> -- <args…>) or use --args '<json array>'`);
  const command = flag(args, 'command');
  const url = flag(args, 'url');
  if (command === undefined && url === undefined) throw new CliError('usage', `capnode servers add ${name} needs --command <cmd> (stdio) or --url <url> (http/sse)`);
  if (command !== undefined && url !== undefined) throw new CliError('usage', 'use either --command (stdio) or --url (http/sse), not both');
  const rawArgs = flag(args, 'args');
  if (rawArgs !== undefined && dashArgs.length > 0) throw new CliError('usage', 'give the server arguments either with --args or after --, not both');
  const serverArgs = rawArgs !== undefined ? parseArgsFlag(rawArgs) : dashArgs;
  const transport = flag(args, 'transport');
  const cwd = flag(args, 'cwd');
  const env = keyValues(context, 'env');
  const headers = keyValues(context, 'header');
  // A relative program path or cwd would be resolved against wherever the host later runs.
  const program = command !== undefined && /[\\/]/.test(command) && !isAbsolute(command) ? resolve(command) : command;
  return {
    name,
    ...(transport === undefined ? {} : { transport }),
    ...(program === undefined ? {} : { command: program }),
    ...(serverArgs.length > 0 ? { args: [...serverArgs] } : {}),
    ...(env === undefined ? {} : { env }),
    ...(cwd === undefined ? {} : { cwd: resolve(cwd) }),
    ...(url === undefined ? {} : { url }),
    ...(headers === undefined ? {} : { headers }),
  };
}

async function add(context: Context): Promise<number> {
  const entry = entryFromFlags(context);
  const { module, store } = await openSettings(context);
  let setup;
  try {
    setup = module.resolveMcpClientSettings(await module.addMcpServers(store, [entry]));
  } catch (error) {
    hostFailure(error, module);
  }
  const server = setup.config.servers.find((candidate) => candidate.name === entry.name)!;
  const scrub = createSecretScrubber(collectSecrets(setup.config.servers));
  context.out(`added MCP server '${server.name}' (${server.transport}: ${describeTarget(server, scrub)}) to ${store.path}`);
  context.err(`capnode: test it: capnode servers test ${quoteArg(server.name)}`);
  if (!setup.reexport) context.err('capnode: to serve its tools through the host as well: capnode servers reexport on');
  else restartHint(context);
  return 0;
}

async function remove(context: Context): Promise<number> {
  const name = context.args.positionals[2]!;
  const { module, store, setup } = await openSettings(context);
  let removed;
  try {
    removed = await module.removeMcpServer(store, name);
  } catch (error) {
    hostFailure(error, module);
  }
  if (!removed) {
    const names = setup.config.servers.map((server) => server.name);
    const close = closeNames(name, names);
    const hint = close.length ? `did you mean: ${close.join(', ')}? ` : names.length ? `configured: ${names.join(', ')}. ` : '';
    throw new CliError('failure', `no MCP server named '${name}' in ${store.path} — ${hint}list them with: capnode servers list`);
  }
  context.out(`removed MCP server '${removed.name}' from ${store.path}`);
  if (setup.reexport) restartHint(context);
  return 0;
}

async function reexport(context: Context): Promise<number> {
  const value = context.args.positionals[2];
  if (value !== 'on' && value !== 'off') throw new CliError('usage', `usage: capnode servers reexport on|off${value ? ` (got '${value}')` : ''}`);
  const { module, store } = await openSettings(context);
  try {
    await module.setMcpReexport(store, value === 'on');
  } catch (error) {
    hostFailure(error, module);
  }
  context.out(`re-export through the host: ${value} (mcpClient.reexport in ${store.path})`);
  restartHint(context);
  return 0;
}

async function importFile(context: Context): Promise<number> {
  const file = resolve(context.args.positionals[2]!);
  let parsed: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    if (file.toLowerCase().endsWith('.toml')) {
      // OpenAgent's client-mcps.toml.
      const { clientMcpsToMcpJson } = await import('./openagentMcps.js');
      const converted = clientMcpsToMcpJson(text);
      if (!converted.value) throw new CliError('failure', `cannot import ${file}; nothing was changed:\n${converted.issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`);
      parsed = converted.value;
    } else {
      parsed = JSON.parse(text);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError('failure', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  const { importMcpServers } = await import('@capnode/mcp-client');
  const { module, store, setup } = await openSettings(context);
  const self = hostSelfIdentity(context.paths, () => store.get().mcp.port);
  const imported = importMcpServers(parsed, { env: context.env, home: homedir(), workspaceFolder: dirname(file), self });
  for (const warning of imported.warnings) context.err(`capnode: ${file}: ${warning.path}: ${warning.message}`);
  if (imported.issues.length > 0) {
    throw new CliError('failure', `cannot import ${file}; nothing was changed:\n${imported.issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`);
  }
  const existing = new Set(setup.config.servers.map((server) => server.name.toLowerCase()));
  const fresh = imported.servers.filter((server) => !existing.has(server.name.toLowerCase()));
  const skipped = imported.servers.filter((server) => existing.has(server.name.toLowerCase())).map((server) => server.name);
  if (fresh.length > 0) {
    try {
      await module.addMcpServers(store, fresh);
    } catch (error) {
      hostFailure(error, module);
    }
  }
  context.out(`imported ${fresh.length} MCP server${fresh.length === 1 ? '' : 's'} from ${file}${fresh.length ? `: ${fresh.map((server) => server.name).join(', ')}` : ''}`);
  if (skipped.length > 0) context.err(`capnode: skipped (already configured): ${skipped.join(', ')}`);
  if (fresh.length > 0) context.err(`capnode: test them: capnode servers test${setup.reexport ? '' : '   · serve them through the host: capnode servers reexport on'}`);
  if (fresh.length > 0 && setup.reexport) restartHint(context);
  return 0;
}

function formatMs(ms: number | undefined): string {
  if (ms === undefined) return '?';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * `capnode servers test [name…]`: connects each server from this process (no host needed) and
 * prints its connect time, tools and diagnostic. Exit 1 when any failed.
 */
async function test(context: Context): Promise<number> {
  const names = context.args.positionals.slice(2);
  const { setup, store } = await openSettings(context);
  const configured = setup.config.servers;
  let chosen: McpServerConfig[];
  if (names.length > 0) {
    chosen = names.map((name) => {
      const server = configured.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
      if (server) return server;
      const close = closeNames(name, configured.map((candidate) => candidate.name));
      throw new CliError('usage', `no MCP server named '${name}' in ${store.path}${close.length ? ` — did you mean: ${close.join(', ')}?` : ''} (list them with: capnode servers list)`);
    });
  } else {
    chosen = configured.filter((server) => server.enabled);
    const disabled = configured.filter((server) => !server.enabled).map((server) => server.name);
    if (disabled.length > 0) context.err(`capnode: skipping disabled: ${disabled.join(', ')} (test one anyway: capnode servers test <name>)`);
  }
  if (chosen.length === 0) {
    context.out(`no MCP servers to test in ${store.path}\nadd one: capnode servers add <name> --command <cmd> [-- <args…>]   or   capnode servers add <name> --url <url>`);
    return 0;
  }
  if (!context.json) context.err(`capnode: connecting ${chosen.length} server${chosen.length === 1 ? '' : 's'}…`);
  const config: McpConfig = { ...setup.config, enabled: true, deferredLoading: false, servers: chosen.map((server) => ({ ...server, enabled: true })) };
  const interrupt = interruptSignal(context, 'the servers');
  try {
    await using runtime = await openLocalRuntime(context, { config, allServers: true, signal: interrupt.signal });
    const tools = Object.values(await runtime.tools({ signal: interrupt.signal }));
    const diagnostics = runtime.diagnostics();
    // A server whose tools/list failed is a failure too, not "connected, 0 tools".
    const failed = diagnostics.filter((diagnostic) => diagnostic.state !== 'connected' || diagnostic.listError !== undefined);
    if (context.json) {
      context.out(JSON.stringify({ servers: diagnostics.map((diagnostic) => ({ ...diagnostic, tools: toolsOf(tools, diagnostic).map(({ name, description }) => ({ name, description })) })), warnings: runtime.warnings }, null, 2));
    } else {
      const lines: string[] = [];
      for (const diagnostic of diagnostics) lines.push(...describeDiagnostic(diagnostic, toolsOf(tools, diagnostic)), '');
      for (const warning of runtime.warnings) lines.push(`warning: ${warning}`);
      lines.push(`${diagnostics.length - failed.length} of ${diagnostics.length} server${diagnostics.length === 1 ? '' : 's'} connected${failed.length ? `; failed: ${failed.map((diagnostic) => diagnostic.server).join(', ')}` : ''}`);
      context.out(lines.join('\n'));
    }
    return failed.length > 0 ? 1 : 0;
  } finally {
    interrupt.dispose();
  }
}

function toolsOf(tools: readonly McpTool[], diagnostic: ServerDiagnostic): McpTool[] {
  return tools.filter((tool) => tool.server === diagnostic.server);
}

function describeDiagnostic(diagnostic: ServerDiagnostic, tools: readonly McpTool[]): string[] {
  const lines: string[] = [];
  if (diagnostic.state === 'connected' && diagnostic.listError !== undefined) {
    lines.push(`${diagnostic.server}: FAILED (${diagnostic.transport}, connected, tools/list failed): ${diagnostic.listError}`);
    return [...lines, ...diagnostic.warnings.filter((warning) => warning !== diagnostic.listError).map((warning) => `  warning: ${warning}`)];
  }
  if (diagnostic.state === 'connected') {
    const info = diagnostic.serverInfo ? `, ${diagnostic.serverInfo.name} ${diagnostic.serverInfo.version}` : '';
    lines.push(`${diagnostic.server}: connected (${diagnostic.transport}, ${formatMs(diagnostic.connectMs)}${info}) — ${diagnostic.toolCount} tool${diagnostic.toolCount === 1 ? '' : 's'}`);
    lines.push(...formatToolRows(tools, '  '));
  } else {
    lines.push(`${diagnostic.server}: FAILED (${diagnostic.transport}, ${diagnostic.state}): ${diagnostic.error ?? 'no details'}`);
  }
  for (const warning of diagnostic.warnings) lines.push(`  warning: ${warning}`);
  return lines;
}
