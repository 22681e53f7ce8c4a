import { parseArgs, type FlagSpec } from './args.js';
import { createContext, type Context } from './context.js';
import { CliError, isCliError, ExitCode } from './errors.js';
import { callCommand, listTools } from './commands/tools.js';
import { version } from './version.js';

const FLAGS: FlagSpec = {
  help: 'switch',
  version: 'switch',
  json: 'switch',
  url: 'value',
  token: 'value',
  'list-tools': 'switch',
  command: 'value',
  params: 'value',
  port: 'value',
  host: 'value',
  always: 'switch',
  hash: 'value',
  name: 'value',
  all: 'switch',
  'no-browser': 'switch',
  args: 'value',
  env: 'value',
  header: 'value',
  transport: 'value',
  cwd: 'value',
  gateway: 'value',
  'gateway-token': 'value',
  'print-url': 'switch',
};

/** Flags each command accepts beside --help. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  '': ['json', 'url', 'token', 'list-tools', 'command', 'params', 'version'],
  serve: ['port', 'host', 'gateway', 'gateway-token'],
  mcp: ['gateway', 'gateway-token'],
  gateway: ['json', 'url', 'gateway', 'gateway-token'],
  status: ['json', 'url', 'token'],
  token: [],
  approvals: ['json', 'url', 'always', 'hash'],
  config: ['json', 'url', 'name'],
  servers: ['json', 'command', 'args', 'url', 'env', 'header', 'transport', 'cwd', 'no-browser'],
  tools: ['json', 'url', 'token', 'all'],
  call: ['json', 'url', 'token', 'params'],
  ui: ['url', 'print-url'],
};

const HELP = `capnode — expose this machine's capabilities to AI agents over MCP

Usage:
  capnode serve [--port N] [--host 127.0.0.1]   run the host (MCP over loopback HTTP) in the foreground
  capnode mcp                                   serve MCP over stdio (for clients that spawn a command)
  capnode --list-tools                          list the running host's tools
  capnode --command <name> [--params '<json>']  call one tool
  capnode status                                the running host's state (app.status)
  capnode token show|path|rotate                the MCP bearer token
  capnode approvals list                        pending approvals, in full (what runs, cwd, env, caller, hash)
  capnode approvals watch                       stream pending approvals live; answer with a/A/d (s skip, q quit)
  capnode approvals allow <id> [--always] [--hash <prefix>]   allow once, or always (adds to the allowlist)
  capnode approvals deny <id> [--hash <prefix>]
  capnode config claude|claude-desktop|cursor|vscode   print a ready MCP client config
  capnode ui [--print-url]                      open the dashboard in the browser (one-time sign-in link)

OpenClaw gateway (token: --gateway-token, env CAPNODE_GATEWAY_TOKEN, or settings.json node.token):
  capnode serve --gateway <ws://host:port>      also connect this machine to the gateway as a node
  capnode gateway status                        the node's connection and pairing state (offline: config and identity)
  capnode gateway pair                          approve this node's pending commands (as a gateway operator)
  capnode mcp channel [--gateway <url>]         the gateway's conversations, events and approvals as MCP over stdio

Tools from other MCP servers (settings.json "mcpClient"):
  capnode servers list                          configured servers (secrets masked)
  capnode servers add <name> --command <cmd> [--args '<json array>' | -- <args…>] [--env K=V …] [--cwd <dir>]
  capnode servers add <name> --url <url> [--header K=V …] [--transport http|sse]
  capnode servers remove <name>
  capnode servers test [<name>…]                connect each server: time, tools, diagnostic (exit 1 if any failed)
  capnode servers login <name> [--no-browser]   OAuth for an http/sse server: browser step, tokens in <config dir>/oauth/
  capnode servers logout <name>                 delete that server's stored OAuth tokens
  capnode servers import <file>                 add the servers of a .mcp.json / Claude Desktop / Cursor / VS Code file
  capnode servers reexport on|off               serve their tools through the host as <server>__<tool>
  capnode tools [--all]                         the host's tools; --all adds the imported ones
  capnode call <server>__<tool> [--params '<json>']   call a tool (through the host, else directly)

Options:
  --url <url>      MCP endpoint (default: the running host's, else http://127.0.0.1:8765/; env CAPNODE_URL)
  --token <token>  bearer token (default: read from the token file; env CAPNODE_TOKEN)
  --json           raw JSON output
  -h, --help       this help;  -V, --version  the version

Config directory: CAPNODE_HOME, else the platform default (e.g. ~/.config/capnode).
Exit codes: 0 ok, 1 failed (tool error, unknown tool, refused), 2 usage, 3 no host, 4 token refused, 130 interrupted.`;

async function run(context: Context): Promise<number> {
  const { args } = context;
  const name = args.positionals[0] ?? '';
  const allowed = ALLOWED[name];
  if (allowed === undefined) throw new CliError('usage', `unknown command '${name}' — see capnode --help`);
  for (const key of args.flags.keys()) {
    if (key !== 'help' && !allowed.includes(key)) throw new CliError('usage', `--${key} does not apply to ${name ? `capnode ${name}` : 'this command'} — see capnode --help`);
  }
  if (args.flags.has('help')) {
    context.out(HELP);
    return 0;
  }
  switch (name) {
    case '':
      if (args.flags.has('version')) {
        context.out(`capnode ${version()}`);
        return 0;
      }
      if (args.flags.has('list-tools')) {
        if (args.flags.has('command')) throw new CliError('usage', 'use either --list-tools or --command, not both');
        return listTools(context);
      }
      if (args.flags.has('command')) return callCommand(context);
      if (args.flags.has('params')) throw new CliError('usage', '--params needs --command <name>');
      context.out(HELP);
      return args.flags.size === 0 ? 0 : ExitCode.usage;
    case 'serve':
      return (await import('./commands/serve.js')).serve(context, version());
    case 'mcp':
      if (args.positionals[1] === 'channel') return (await import('./commands/gateway.js')).channel(context, version());
      if (args.positionals.length > 1) throw new CliError('usage', `unknown mcp subcommand '${args.positionals[1]}' — capnode mcp, or capnode mcp channel`);
      if (args.flags.has('gateway') || args.flags.has('gateway-token')) throw new CliError('usage', '--gateway applies to capnode mcp channel (and capnode serve)');
      return (await import('./commands/serve.js')).serveStdio(context, version());
    case 'gateway':
      return (await import('./commands/gateway.js')).gateway(context, version());
    case 'status':
      return (await import('./commands/status.js')).status(context);
    case 'token':
      return (await import('./commands/token.js')).token(context);
    case 'approvals':
      return (await import('./commands/approvals.js')).approvals(context);
    case 'config':
      return (await import('./commands/config.js')).config(context);
    case 'servers':
      return (await import('./commands/servers.js')).servers(context);
    case 'tools':
      return (await import('./commands/imported.js')).tools(context);
    case 'call':
      return (await import('./commands/imported.js')).call(context);
    case 'ui':
      return (await import('./commands/ui.js')).ui(context);
    default:
      throw new CliError('usage', `unknown command '${name}' — see capnode --help`);
  }
}

async function main(): Promise<void> {
  let code: number;
  try {
    code = await run(createContext(parseArgs(process.argv.slice(2), FLAGS)));
  } catch (error) {
    if (isCliError(error)) {
      if (error.code !== 'interrupted') process.stderr.write(`capnode: ${error.message}\n`);
      code = error.exitCode;
    } else {
      process.stderr.write(`capnode: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
      code = ExitCode.failure;
    }
  }
  process.exitCode = code;
}

void main();
