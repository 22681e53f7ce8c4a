import { realpathSync } from 'node:fs';
import { flag } from '../args.js';
import { mcpUrl, type Context } from '../context.js';
import { CliError } from '../errors.js';
import { ensureToken } from './token.js';

const CLIENTS = ['claude', 'claude-desktop', 'cursor', 'vscode'] as const;
type Client = (typeof CLIENTS)[number];

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function stdioLaunch(context: Context): { command: string; args: string[]; env?: Record<string, string> } {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : 'capnode';
  const home = context.env.CAPNODE_HOME;
  return { command: process.execPath, args: [script, 'mcp'], ...(home ? { env: { CAPNODE_HOME: home } } : {}) };
}

/**
 * `capnode config <client>`: a ready MCP client config for this host. Human mode explains where the
 * snippet goes; `--json` prints only the JSON so it can be piped.
 */
export async function config(context: Context): Promise<number> {
  const client = context.args.positionals[1] as Client | undefined;
  if (!client || !CLIENTS.includes(client)) {
    throw new CliError('usage', `usage: capnode config ${CLIENTS.join('|')}${client ? ` (unknown client '${client}')` : ''}`);
  }
  const name = flag(context.args, 'name') ?? 'capnode';
  const url = mcpUrl(context);
  const bearer = async () => `Bearer ${await ensureToken(context)}`;
  const print = (intro: string[], snippet: unknown, outro: string[] = []) => {
    const json = JSON.stringify(snippet, null, 2);
    if (context.json) {
      context.out(json);
      return;
    }
    context.out([...intro, '', json, ...(outro.length ? ['', ...outro] : [])].join('\n'));
  };

  switch (client) {
    case 'claude': {
      const authorization = await bearer();
      const command = ['claude', 'mcp', 'add', '--transport', 'http', name, url, '--header', `Authorization: ${authorization}`].map(shellQuote).join(' ');
      if (!context.json) context.out(`# Claude Code: run this once\n${command}\n\n# or put this in .mcp.json (project) or ~/.claude.json (keep the token out of version control)`);
      print([], { mcpServers: { [name]: { type: 'http', url, headers: { Authorization: authorization } } } });
      return 0;
    }
    case 'claude-desktop': {
      const authorization = await bearer();
      print(
        [
          '# Claude Desktop: merge into claude_desktop_config.json',
          '#   macOS:   ~/Library/Application Support/Claude/claude_desktop_config.json',
          '#   Windows: %APPDATA%\\Claude\\claude_desktop_config.json',
          '# Claude Desktop starts local servers over stdio, so this runs `capnode mcp`: the same',
          '# capabilities, settings and exec approvals as the HTTP host, no token needed.',
        ],
        { mcpServers: { [name]: stdioLaunch(context) } },
        [`# HTTP alternative (clients that accept a URL): ${url} with header Authorization: ${authorization}`],
      );
      return 0;
    }
    case 'cursor': {
      const authorization = await bearer();
      print(['# Cursor: merge into ~/.cursor/mcp.json (or .cursor/mcp.json in a project you do not commit)'], {
        mcpServers: { [name]: { url, headers: { Authorization: authorization } } },
      });
      return 0;
    }
    case 'vscode':
      print(
        ['# VS Code: put this in .vscode/mcp.json; VS Code asks for the token once and stores it securely,', '# so the file holds no secret. Paste the token from: capnode token show'],
        {
          servers: { [name]: { type: 'http', url, headers: { Authorization: `Bearer \${input:${name}-token}` } } },
          inputs: [{ type: 'promptString', id: `${name}-token`, description: 'capnode MCP token (capnode token show)', password: true }],
        },
      );
      return 0;
  }
}
