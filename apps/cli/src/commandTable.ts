import type { FlagSpec } from './args.js';
import type { Context } from './context.js';
import { root } from './root.js';
import { version } from './version.js';

/** One flag the CLI knows: whether it takes a value, its placeholder and one line of help. */
export interface FlagInfo {
  readonly kind: 'value' | 'switch';
  /** Placeholder shown in help, e.g. `N` for `--port N`. */
  readonly value?: string;
  /** The one-letter alias (`-f`), see `SHORT` in args.ts. */
  readonly short?: string;
  readonly help: string;
}

/**
 * Every flag of every command. A command accepts the names its row lists in `flags`; `--help` is
 * accepted everywhere. Add a new flag here when a row needs one.
 */
export const FLAGS = {
  help: { kind: 'switch', short: 'h', help: 'this help (capnode help <command>: one command)' },
  version: { kind: 'switch', short: 'V', help: 'the version' },
  json: { kind: 'switch', help: 'raw JSON output' },
  url: { kind: 'value', value: 'url', help: "MCP endpoint (default: the running host's, else http://127.0.0.1:8765/; env CAPNODE_URL)" },
  token: { kind: 'value', value: 'token', help: 'bearer token (default: read from the token file; env CAPNODE_TOKEN)' },
  'list-tools': { kind: 'switch', help: "list the running host's tools" },
  command: { kind: 'value', value: 'name', short: 'c', help: 'the tool to call (servers add: the command to spawn)' },
  params: { kind: 'value', value: 'json', short: 'p', help: "the tool's arguments as a JSON object" },
  port: { kind: 'value', value: 'N', help: 'port to listen on (0 picks a free one)' },
  host: { kind: 'value', value: 'address', help: 'address to bind (loopback only: 127.0.0.1 or ::1)' },
  always: { kind: 'switch', help: 'allow from now on without asking (adds to the allowlist)' },
  hash: { kind: 'value', value: 'prefix', help: 'refuse to answer unless the request has this argument hash' },
  name: { kind: 'value', value: 'server', help: 'the server name the client config uses (default capnode)' },
  all: { kind: 'switch', help: 'include the tools imported from other MCP servers' },
  'no-browser': { kind: 'switch', help: 'print the URL instead of opening a browser' },
  args: { kind: 'value', value: 'json array', help: 'arguments of a stdio server' },
  env: { kind: 'value', value: 'K=V', help: 'environment of a stdio server (repeatable)' },
  header: { kind: 'value', value: 'K=V', help: 'HTTP header of an http/sse server (repeatable)' },
  transport: { kind: 'value', value: 'http|sse', help: 'transport of a URL server' },
  cwd: { kind: 'value', value: 'dir', help: 'working directory of a stdio server' },
  gateway: { kind: 'value', value: 'ws://host:port', help: 'OpenClaw gateway to connect to as a gateway node' },
  openagent: { kind: 'value', value: 'ws://host:port/ws/capabilities', help: "OpenAgent's capability WebSocket for this run (the openagent switch still decides)" },
  'gateway-token': { kind: 'value', value: 'token', help: 'gateway token (else CAPNODE_GATEWAY_TOKEN, else settings.json gateway.token)' },
  write: { kind: 'switch', help: "merge the entry into the client's config file (shows the diff, keeps a backup)" },
  yes: { kind: 'switch', short: 'y', help: 'do not ask for confirmation' },
  follow: { kind: 'switch', short: 'f', help: 'keep printing new lines until Ctrl-C' },
  lines: { kind: 'value', value: 'N', short: 'n', help: 'how many lines to print (default 50)' },
  'print-url': { kind: 'switch', help: 'print the one-time dashboard sign-in link instead of opening a browser' },
  'dev-plugin': { kind: 'value', value: 'path', help: 'load this plugin file and reload it whenever it changes (repeatable)' },
  markdown: { kind: 'switch', help: 'with --list-tools: the stock command surface as Markdown (offline)' },
  'dry-run': { kind: 'switch', help: 'print the file it would write, change nothing' },
  tray: { kind: 'switch', help: 'start the tray (capnode-tray) at login instead of capnode serve' },
  'tool-names': { kind: 'value', value: 'dotted|underscore', help: "how tools/list spells tool names: 'dotted' (system.run) or 'underscore' (system_run)" },
} as const satisfies Record<string, FlagInfo>;

export type FlagName = keyof typeof FLAGS;

/** The flags `capnode --help` lists under "Options:", in this order (syntax and help from {@link FLAGS}). */
export const GLOBAL_FLAGS: readonly FlagName[] = ['url', 'token', 'json', 'help', 'version'];

/** The flag kinds for {@link parseArgs}. */
export const FLAG_SPEC: FlagSpec = Object.fromEntries(Object.entries(FLAGS).map(([name, info]) => [name, info.kind]));

/** One line of a command's usage: the syntax and what it does. */
export type UsageLine = readonly [syntax: string, what: string];

/**
 * One row of the command table: everything parsing, help and dispatch need. The metadata is plain
 * data; `run` imports the command's module only when the command runs, so `--help`, `--version`
 * and `--list-tools` load no command module.
 */
export interface CommandRow {
  /** The first positional (`serve`); `''` is the bare `capnode` with its flags. */
  readonly name: string;
  /** One line for the overview and the head of `capnode help <name>`. */
  readonly summary: string;
  /** The overview section the row's usage lines go under. */
  readonly section: Section;
  readonly usage: readonly UsageLine[];
  /** Flags the command accepts beside `--help`. */
  readonly flags: readonly FlagName[];
  /** The second positional's values (shown in help; the command checks it and says what is allowed). */
  readonly subcommands?: readonly string[];
  /** More lines for `capnode help <name>` only. */
  readonly notes?: readonly string[];
  /** Hidden from the overview (still dispatched, still has help). */
  readonly hidden?: boolean;
  /** Runs the command: loads its module with `import()` and calls it. */
  readonly run: (context: Context) => Promise<number>;
}

export type Section = 'main' | 'consent' | 'plugins' | 'gateway' | 'servers' | 'diagnose';

/** Overview section titles, in order. */
export const SECTIONS: Readonly<Record<Section, string>> = {
  main: 'Usage:',
  consent: 'Consent (screen, camera, microphone, location, files, computer, browser; each off until turned on):',
  plugins: 'Plugins (settings.json "plugins"; state and diagnostics: capnode status):',
  diagnose: 'Diagnose:',
  gateway: 'OpenClaw gateway (token: --gateway-token, env CAPNODE_GATEWAY_TOKEN, or settings.json gateway.token):',
  servers: 'Tools from other MCP servers (settings.json "mcpClient"):',
};

/** The client ids `capnode config` knows (kept here so help does not load the host's client module). */
export const CONFIG_CLIENTS = ['claude', 'claude-desktop', 'cursor', 'vscode'] as const;

/**
 * The command table. To add a command: add a row (name, summary, section, usage, flags, run with a
 * lazy `import('./commands/<file>.js')`) and, for a new flag, an entry in {@link FLAGS}. Nothing else
 * changes: parsing, the flag check, `capnode help <name>`, `<name> --help` and the overview follow.
 */
export const COMMANDS: readonly CommandRow[] = [
  {
    name: '',
    summary: "expose this machine's capabilities to AI agents over MCP",
    section: 'main',
    usage: [
      ['capnode --list-tools', "list the running host's tools"],
      ["capnode --command <name> [--params '<json>']", 'call one tool'],
      ['capnode --list-tools --markdown', 'the stock command surface as Markdown (offline; docs/commands.md)'],
    ],
    flags: ['json', 'url', 'token', 'list-tools', 'markdown', 'command', 'params', 'version'],
    // The fast path: bundled into bin.js (no import()), so --list-tools and --command load one file.
    run: root,
  },
  {
    name: 'serve',
    summary: 'run the host (MCP over loopback HTTP) in the foreground',
    section: 'main',
    usage: [
      ['capnode serve [--port N] [--host 127.0.0.1]', 'run the host (MCP over loopback HTTP) in the foreground'],
      ['capnode serve --dev-plugin <path>', 'also load a plugin file and reload it whenever it changes'],
    ],
    flags: ['port', 'host', 'gateway', 'gateway-token', 'openagent', 'dev-plugin'],
    notes: ['The last startup line is `capnode ready: MCP on <url> (token: <path>)`. Ctrl-C drains in-flight requests; a second Ctrl-C forces.'],
    run: async (context) => (await import('./commands/serve.js')).serve(context, version()),
  },
  {
    name: 'mcp',
    summary: 'serve MCP over stdio (for clients that spawn a command)',
    section: 'main',
    usage: [
      ['capnode mcp', 'serve MCP over stdio (for clients that spawn a command)'],
      ['capnode mcp --tool-names underscore', "spell tool names with '_' for '.' (OpenAI-style harnesses); default: settings mcp.toolNames"],
    ],
    flags: ['gateway', 'gateway-token', 'tool-names'],
    subcommands: ['channel'],
    run: async (context) => (await import('./commands/serve.js')).mcp(context, version()),
  },
  {
    name: 'status',
    summary: "the running host's state: listeners, gateway node, imported servers, pending approvals",
    section: 'main',
    usage: [['capnode status [--json]', "the running host's state (--json: app.status as JSON)"]],
    flags: ['json', 'url', 'token'],
    run: async (context) => (await import('./commands/status.js')).status(context),
  },
  {
    name: 'skill',
    summary: 'the capnode SKILL.md for agents (commands, consent, approvals, retries)',
    section: 'main',
    usage: [['capnode skill', 'the SKILL.md for agents, from the registry and settings.json (the gateway node publishes it)']],
    flags: [],
    run: async (context) => (await import('./commands/skill.js')).skill(context),
  },
  {
    name: 'token',
    summary: 'the MCP bearer tokens: one per client, named',
    section: 'main',
    usage: [
      ['capnode token show|path|rotate', "the 'default' MCP bearer token (the mcp-token file)"],
      ['capnode token add <name>', 'a new token for one client; printed once, its calls carry <name> in audit and approvals'],
      ['capnode token list [--json]', 'every token: name, created, last used (never the values)'],
      ['capnode token revoke <name>', 'remove a token; the running host refuses it at once'],
    ],
    flags: ['json'],
    subcommands: ['show', 'path', 'rotate', 'add', 'list', 'revoke'],
    run: async (context) => (await import('./commands/token.js')).token(context),
  },
  {
    name: 'approvals',
    summary: 'pending exec approvals: list, watch, allow, deny',
    section: 'main',
    usage: [
      ['capnode approvals list', 'pending approvals, in full (what runs, cwd, env, caller, hash)'],
      ['capnode approvals watch', 'stream pending approvals live; answer with a/A/d (s skip, q quit)'],
      ['capnode approvals allow <id> [--always] [--hash <prefix>]', 'allow once, or always (adds to the allowlist)'],
      ['capnode approvals deny <id> [--hash <prefix>]', 'refuse it'],
    ],
    flags: ['json', 'url', 'always', 'hash'],
    subcommands: ['list', 'watch', 'allow', 'deny'],
    run: async (context) => (await import('./commands/approvals.js')).approvals(context),
  },
  {
    name: 'config',
    summary: "a ready MCP client config for this host, or merged into the client's file with --write",
    section: 'main',
    usage: [
      [`capnode config ${CONFIG_CLIENTS.join('|')}`, 'print a ready MCP client config'],
      ['capnode config <client> --write [--yes]', "merge it into the client's config file: diff first, backup kept"],
      ['capnode config <client> --tool-names dotted|underscore', 'select a tool name style in the entry (default: what the client accepts)'],
    ],
    flags: ['json', 'url', 'name', 'write', 'yes', 'tool-names'],
    subcommands: CONFIG_CLIENTS,
    notes: ['--write never drops other entries or unknown keys, refuses a file it cannot parse, and keeps <file>.capnode-backup-<time>.'],
    run: async (context) => (await import('./commands/config.js')).config(context),
  },
  {
    name: 'ui',
    summary: "open the running host's dashboard in the browser (one-time sign-in link)",
    section: 'main',
    usage: [['capnode ui [--print-url]', 'open the dashboard in the browser; --print-url prints only the one-time link']],
    flags: ['url', 'print-url'],
    notes: ['The link works once, within 60 s; it is minted with the admin token, which MCP clients never hold.'],
    run: async (context) => (await import('./commands/ui.js')).ui(context),
  },
  {
    name: 'consent',
    summary: 'consent per category: screen, camera, microphone, location, files, computer, browser (off|ask|allow)',
    section: 'consent',
    usage: [
      ['capnode consent list', 'each category\'s mode (off|ask|allow) and the "allow always" grants'],
      ['capnode consent set <category> <mode>', 'e.g. capnode consent set screen ask'],
    ],
    flags: ['json'],
    subcommands: ['list', 'set'],
    run: async (context) => (await import('./commands/consent.js')).consent(context),
  },
  {
    name: 'plugins',
    summary: 'plugins: list, add, remove, new',
    section: 'plugins',
    usage: [
      ['capnode plugins list', 'configured plugins'],
      ['capnode plugins add <absolute path|package>', 'a module file or folder, or an npm package installed into <config dir>/plugins'],
      ['capnode plugins remove <name>', ''],
      ['capnode plugins new <name>', 'create a plugin project (with a test that runs it in a real host)'],
    ],
    flags: ['json'],
    subcommands: ['list', 'add', 'remove', 'new'],
    run: async (context) => (await import('./commands/plugins.js')).plugins(context),
  },
  {
    name: 'service',
    summary: 'start the host (or the tray) at login: systemd user unit, launchd agent, logon task',
    section: 'main',
    usage: [
      ['capnode service install [--tray] [--dry-run]', 'start the host (or the tray) at login: systemd user unit, launchd agent, logon task'],
      ['capnode service uninstall | status', 'remove it / show whether it is installed and running'],
    ],
    flags: ['json', 'dry-run', 'tray'],
    subcommands: ['install', 'uninstall', 'status'],
    run: async (context) => (await import('./commands/service.js')).service(context),
  },
  {
    name: 'doctor',
    summary: 'check this machine: host, file modes, port, client configs, gateway, capability backends',
    section: 'diagnose',
    usage: [['capnode doctor [--json]', 'one line per check with ok/warn/fail and the fix (exit 1 on any fail)']],
    flags: ['json', 'url'],
    run: async (context) => (await import('./commands/doctor.js')).doctor(context),
  },
  {
    name: 'logs',
    summary: "the host's log file (<config dir>/logs/host.log)",
    section: 'diagnose',
    usage: [['capnode logs [-f] [-n N]', "the host's log: the last N lines (default 50); -f keeps following"]],
    flags: ['follow', 'lines'],
    run: async (context) => (await import('./commands/logs.js')).logs(context),
  },
  {
    name: 'gateway',
    summary: 'the gateway node: connection and pairing state, approve its pairing',
    section: 'gateway',
    usage: [
      ['capnode serve --gateway <ws://host:port>', 'also connect this machine to the gateway as a gateway node'],
      ['capnode gateway status', "the gateway node's connection and pairing state (offline: config and identity)"],
      ['capnode gateway pair', "approve this gateway node's pending commands (as a gateway operator)"],
      ['capnode mcp channel [--gateway <url>]', "the gateway's conversations, events and approvals as MCP over stdio"],
    ],
    flags: ['json', 'url', 'gateway', 'gateway-token'],
    subcommands: ['status', 'pair'],
    run: async (context) => (await import('./commands/gateway.js')).gateway(context, version()),
  },
  {
    name: 'openagent',
    summary: "OpenAgent's client capabilities: the device-level switch and the channel's state",
    section: 'gateway',
    usage: [
      ['capnode openagent enable | disable', 'turn the capability channel on or off (off cancels running calls)'],
      ['capnode openagent status [--json]', "the channel's phase: disabled, connecting, connected, active, unavailable"],
      ['capnode serve --openagent <ws://host:port/ws/capabilities>', 'the capability URL for this run'],
    ],
    flags: ['json', 'url'],
    subcommands: ['enable', 'disable', 'status'],
    notes: ['Set openagent.url, openagent.deviceId and openagent.accountId in settings.json (openagent.headers for the handshake; secrets, masked).'],
    run: async (context) => (await import('./commands/openagent.js')).openagent(context),
  },
  {
    name: 'servers',
    summary: 'the MCP servers whose tools capnode imports',
    section: 'servers',
    usage: [
      ['capnode servers list', 'configured servers (secrets masked)'],
      ["capnode servers add <name> --command <cmd> [--args '<json array>' | -- <args…>] [--env K=V …] [--cwd <dir>]", ''],
      ['capnode servers add <name> --url <url> [--header K=V …] [--transport http|sse]', ''],
      ['capnode servers remove <name>', ''],
      ['capnode servers test [<name>…]', 'connect each server: time, tools, diagnostic (exit 1 if any failed)'],
      ['capnode servers login <name> [--no-browser]', 'OAuth for an http/sse server: browser step, tokens in <config dir>/oauth/'],
      ['capnode servers logout <name>', "delete that server's stored OAuth tokens"],
      ['capnode servers import <file>', "add the servers of a .mcp.json / Claude Desktop / Cursor / VS Code file, or OpenAgent's client-mcps.toml"],
      ['capnode servers reexport on|off', 'serve their tools through the host as <server>__<tool>'],
    ],
    flags: ['json', 'command', 'args', 'url', 'env', 'header', 'transport', 'cwd', 'no-browser'],
    subcommands: ['list', 'add', 'remove', 'test', 'login', 'logout', 'import', 'reexport'],
    run: async (context) => (await import('./commands/servers.js')).servers(context),
  },
  {
    name: 'tools',
    summary: "the host's tools; --all adds the imported ones",
    section: 'servers',
    usage: [['capnode tools [--all]', "the host's tools; --all adds the imported ones"]],
    flags: ['json', 'url', 'token', 'all'],
    run: async (context) => (await import('./commands/imported.js')).tools(context),
  },
  {
    name: 'call',
    summary: 'call a tool (through the host, else directly)',
    section: 'servers',
    usage: [["capnode call <server>__<tool> [--params '<json>']", 'call a tool (through the host, else directly)']],
    flags: ['json', 'url', 'token', 'params'],
    run: async (context) => (await import('./commands/imported.js')).call(context),
  },
  {
    name: 'help',
    summary: "a command's help",
    section: 'main',
    usage: [['capnode help <command>', "that command's help (also: capnode <command> --help)"]],
    flags: [],
    hidden: true,
    run: async () => 0, // answered by dispatch without loading anything
  },
];

/** The row named `name`, or `undefined`. */
export function findCommand(name: string): CommandRow | undefined {
  return COMMANDS.find((row) => row.name === name);
}
