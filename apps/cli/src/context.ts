import { defaultMcpUrl, hostPaths, listRuntimeStates, readTokenFile, resolveHome, type HostPaths } from '@capnode/host/setup';
import { flag, type ParsedArgs } from './args.js';
import { CliError } from './errors.js';
import type { Endpoint } from './http.js';

/** What every command gets: parsed arguments, the config directory's files, and output streams. */
export interface Context {
  readonly args: ParsedArgs;
  readonly paths: HostPaths;
  readonly json: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  out(line: string): void;
  err(line: string): void;
}

export function createContext(args: ParsedArgs, env: Readonly<Record<string, string | undefined>> = process.env): Context {
  return {
    args,
    paths: hostPaths(resolveHome({ env })),
    json: args.flags.has('json'),
    env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
}

/**
 * Reads a token file; `undefined` when it is missing or empty. A symlinked token file, or one others
 * can read, is a CliError naming the file and the fix (its content is never sent anywhere).
 */
export function readToken(path: string): string | undefined {
  try {
    return readTokenFile(path);
  } catch (error) {
    throw new CliError('failure', (error as Error).message, { cause: error });
  }
}

/** The MCP endpoint: `--url` / `CAPNODE_URL`, else the running host's, else the configured default. */
export function mcpUrl(context: Context): string {
  return flag(context.args, 'url') ?? context.env.CAPNODE_URL ?? defaultMcpUrl(context.paths);
}

/** URL and bearer token for MCP requests, with a 401 hint that matches where the token came from. */
export function mcpEndpoint(context: Context): Endpoint {
  const url = mcpUrl(context);
  const given = flag(context.args, 'token') ?? context.env.CAPNODE_TOKEN;
  if (given !== undefined) {
    return { url, token: given, tokenHint: 'Check the token passed with --token (or CAPNODE_TOKEN); show the host\'s token with: capnode token show' };
  }
  const path = context.paths.mcpToken;
  const token = readToken(path);
  const elsewhere = 'if the host runs with another config directory, set CAPNODE_HOME to it or pass --token';
  return {
    url,
    token,
    tokenHint:
      token === undefined
        ? `No token file at ${path} (the host creates it on first start); ${elsewhere}.`
        : `The token was read from ${path}; ${elsewhere}. Show the current token with: capnode token show`,
  };
}

/**
 * URL bases and the admin token for `/_capnode/` routes (approvals, token rotation): the one `--url`
 * names, else every live host of this config directory (the HTTP host, then stdio hosts), else the
 * default URL (so the "no host" message names it).
 */
export function adminEndpoints(context: Context): Endpoint[] {
  const explicit = flag(context.args, 'url') ?? context.env.CAPNODE_URL;
  const bases = explicit
    ? [new URL('/_capnode/', explicit).href]
    : listRuntimeStates(context.paths).map((state) => state.adminUrl);
  if (bases.length === 0) bases.push(new URL('/_capnode/', defaultMcpUrl(context.paths)).href);
  const path = context.paths.adminToken;
  const token = readToken(path);
  const tokenHint =
    token === undefined
      ? `No admin token at ${path}; run this as the user and with the CAPNODE_HOME the host runs with.`
      : `The admin token was read from ${path}; run this as the user and with the CAPNODE_HOME the host runs with.`;
  return bases.map((url) => ({ url, token, tokenHint }));
}
