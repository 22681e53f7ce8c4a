import type { McpClientSetup } from '@capnode/host/settings';
import type { McpConfig, ServerDiagnostic } from '@capnode/mcp-client';
import { flag } from '../args.js';
import { mcpEndpoint, mcpUrl, type Context } from '../context.js';
import { CliError, isCliError } from '../errors.js';
import { interruptSignal, openLocalRuntime, openSettings } from '../mcpClient.js';
import { notRunningMessage } from '../http.js';
import { formatContent, formatToolTable, type CallResult, type ToolInfo } from '../output.js';
import { rpcCall } from '../rpc.js';
import { closeNames } from '../suggest.js';
import { callCommand, fetchTools } from './tools.js';

/** The part of the host's `app.status` this module reads. */
interface HostImports {
  readonly reexport: boolean;
  readonly state: string;
  readonly servers: readonly ServerDiagnostic[];
}

/** The running host's tools and whether it re-exports imported ones; `undefined` when no host answers. */
async function hostView(context: Context): Promise<{ tools: ToolInfo[]; imports: HostImports | undefined } | undefined> {
  const endpoint = mcpEndpoint(context);
  let tools: ToolInfo[];
  try {
    tools = await fetchTools(endpoint);
  } catch (error) {
    if (isCliError(error) && error.code === 'unreachable') return undefined;
    throw error;
  }
  const status = (await rpcCall(endpoint, 'tools/call', { name: 'app.status', arguments: {} }).catch(() => undefined)) as CallResult | undefined;
  const imports = (status?.structuredContent as { mcpClient?: HostImports } | undefined)?.mcpClient;
  return { tools, imports };
}

function reportFailures(context: Context, diagnostics: readonly ServerDiagnostic[], where: string): void {
  for (const diagnostic of diagnostics) {
    if (diagnostic.state === 'connecting') context.err(`capnode: MCP server '${diagnostic.server}'${where} is still connecting`);
    else if (diagnostic.state === 'connected' && diagnostic.listError !== undefined) {
      context.err(`capnode: MCP server '${diagnostic.server}'${where} connected but its tools could not be listed: ${diagnostic.listError} (details: capnode servers test ${diagnostic.server})`);
    }
    else if (diagnostic.state !== 'connected') {
      const what = diagnostic.state === 'failed' ? 'failed to connect' : `is ${diagnostic.state}`;
      context.err(`capnode: MCP server '${diagnostic.server}'${where} ${what}: ${diagnostic.error ?? 'no details'} (details: capnode servers test ${diagnostic.server})`);
    }
  }
}

/**
 * `capnode tools [--all]`: the running host's tools; with `--all` also the tools of the configured
 * MCP servers (from the host when it re-exports them, else connected from this process).
 */
export async function tools(context: Context): Promise<number> {
  if (context.args.positionals.length > 1) throw new CliError('usage', `unexpected argument '${context.args.positionals[1]}' — usage: capnode tools [--all]`);
  const all = context.args.flags.has('all');
  const host = all ? await hostView(context) : { tools: await fetchTools(mcpEndpoint(context)), imports: undefined };
  let list: ToolInfo[] = host?.tools ?? [];
  if (all) {
    if (!host) context.err('capnode: no capnode host is running; showing only the tools of the configured MCP servers (start the host: capnode serve)');
    if (host?.imports?.reexport && host.imports.state !== 'off' && host.imports.state !== 'failed') {
      reportFailures(context, host.imports.servers, ' (in the host)');
    } else {
      const { setup } = await openSettings(context);
      const interrupt = interruptSignal(context, 'the servers');
      try {
        await using runtime = await openLocalRuntime(context, { config: setup.config, agent: setup.agent, allServers: setup.allServers, signal: interrupt.signal });
        const imported = Object.values(await runtime.tools({ signal: interrupt.signal }));
        const known = new Set(list.map((tool) => tool.name.toLowerCase()));
        list = [...list, ...imported.filter((tool) => !known.has(tool.name.toLowerCase())).map(({ name, description, inputSchema }) => ({ name, description, inputSchema: inputSchema as Record<string, unknown> }))];
        reportFailures(context, runtime.diagnostics(), '');
      } finally {
        interrupt.dispose();
      }
    }
  }
  context.out(context.json ? JSON.stringify({ tools: list }, null, 2) : formatToolTable(list, all ? 'capnode call <name>' : 'capnode --command <name>'));
  return 0;
}

/**
 * `capnode call <name> --params '<json>'`: calls a tool through the running host when it offers
 * it (re-exported `<server>__<tool>` tools included), else connects the tool's MCP server from
 * this process and calls it there.
 */
export async function call(context: Context): Promise<number> {
  const name = context.args.positionals[1];
  if (!name) throw new CliError('usage', `usage: capnode call <name> [--params '<json>'], e.g. capnode call everything__echo --params '{"message":"hi"}'`);
  if (context.args.positionals.length > 2) throw new CliError('usage', `unexpected argument '${context.args.positionals[2]}' — pass arguments as JSON with --params`);
  if (flag(context.args, 'params') === undefined && context.args.flags.has('params')) throw new CliError('usage', '--params needs a value');
  return callCommand(context, name, (reason, args) => callLocally(context, name, args, reason));
}

async function callLocally(context: Context, name: string, args: Record<string, unknown>, reason: 'unknown' | 'unreachable'): Promise<number> {
  const { setup } = await openSettings(context);
  const separator = name.indexOf('__');
  const serverPart = separator > 0 ? name.slice(0, separator).toLowerCase() : undefined;
  const { toServerPart } = await import('@capnode/mcp-client');
  const servers = serverPart === undefined ? [] : setup.servers.filter((server) => toServerPart(server.name).toLowerCase() === serverPart);
  if (servers.length === 0) {
    if (reason === 'unreachable' && serverPart === undefined) throw new CliError('unreachable', notRunningMessage(mcpUrl(context)));
    const where = reason === 'unreachable' ? 'no capnode host is running (start one: capnode serve)' : 'the host does not offer it';
    throw new CliError('failure', `unknown tool '${name}' — ${where}, and no configured MCP server${serverPart ? ` is named '${serverPart}'` : ' matches (imported tools are named <server>__<tool>)'}. List tools: capnode tools --all`);
  }
  if (reason === 'unknown') context.err(`capnode: the host does not offer ${name}; calling it through MCP server '${servers[0]!.name}' directly`);
  return runLocal(context, setup, servers, name, args);
}

async function runLocal(context: Context, setup: McpClientSetup, servers: McpClientSetup['servers'], name: string, args: Record<string, unknown>): Promise<number> {
  const interrupt = interruptSignal(context, name);
  try {
    const config: McpConfig = { ...setup.config, deferredLoading: false, servers };
    await using runtime = await openLocalRuntime(context, { config, agent: setup.agent, allServers: setup.allServers, signal: interrupt.signal });
    const available = await runtime.tools({ signal: interrupt.signal });
    const tool = Object.values(available).find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
    if (!tool) {
      const failed = runtime.diagnostics().find((diagnostic) => diagnostic.state !== 'connected');
      if (failed) throw new CliError('failure', `MCP server '${failed.server}' is not available: ${failed.error ?? failed.state} (details: capnode servers test ${failed.server})`);
      const close = closeNames(name, Object.keys(available));
      throw new CliError('failure', `unknown tool '${name}' — ${close.length ? `did you mean: ${close.join(', ')}? ` : ''}list all with: capnode tools --all`);
    }
    const result = await runtime.call(tool.name, args, { signal: interrupt.signal });
    if (interrupt.signal.aborted) {
      context.err(`capnode: ${name} cancelled`);
      return 130;
    }
    if (context.json) {
      context.out(JSON.stringify(result, null, 2));
      return result.isError ? 1 : 0;
    }
    const text = formatContent(result.content as unknown as Record<string, unknown>[]);
    if (result.isError) {
      context.err(`capnode: ${name} failed: ${text.trim() || 'the tool reported an error without a message'}`);
      return 1;
    }
    if (text) context.out(text);
    return 0;
  } finally {
    interrupt.dispose();
  }
}
