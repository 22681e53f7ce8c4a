import { parse } from 'smol-toml';

/** One problem of a `client-mcps.toml`, by path (`mcp[2].command`). */
export interface ClientMcpsIssue {
  readonly path: string;
  readonly message: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/**
 * OpenAgent's `~/.openagent/user/client-mcps.toml` (`version = 1`, `[[mcp]] name, command = [argv], env,
 * enabled`) as the `.mcp.json` shape capnode's importer reads (`{ mcpServers: { <name>: { command, args,
 * env, disabled } } }`), or the problems that stop the import (nothing is imported then).
 */
export function clientMcpsToMcpJson(text: string): { readonly value?: Record<string, unknown>; readonly issues: readonly ClientMcpsIssue[] } {
  let document: Record<string, unknown>;
  try {
    document = parse(text) as Record<string, unknown>;
  } catch (error) {
    return { issues: [{ path: '(file)', message: `not valid TOML: ${(error as Error).message.split('\n')[0]}` }] };
  }
  const issues: ClientMcpsIssue[] = [];
  if (document.version !== 1) issues.push({ path: 'version', message: 'must be 1' });
  const entries = document.mcp ?? [];
  if (!Array.isArray(entries)) return { issues: [...issues, { path: 'mcp', message: 'must be an array of tables ([[mcp]])' }] };
  const servers: Record<string, Record<string, unknown>> = {};
  entries.forEach((entry: unknown, index) => {
    const at = (field: string) => `mcp[${index}]${field ? `.${field}` : ''}`;
    if (!isRecord(entry)) return void issues.push({ path: at(''), message: 'must be a table' });
    const { name, command, env, enabled } = entry;
    if (typeof name !== 'string' || name === '') return void issues.push({ path: at('name'), message: 'must be a non-empty string' });
    if (Object.hasOwn(servers, name)) return void issues.push({ path: at('name'), message: `'${name}' is listed twice` });
    if (!Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string' && part !== '')) {
      return void issues.push({ path: at('command'), message: 'must be a non-empty array of strings (the argv)' });
    }
    if (env !== undefined && (!isRecord(env) || !Object.values(env).every((value) => typeof value === 'string'))) return void issues.push({ path: at('env'), message: 'must be a table of strings' });
    if (enabled !== undefined && typeof enabled !== 'boolean') return void issues.push({ path: at('enabled'), message: 'must be true or false' });
    const [program, ...args] = command as string[];
    servers[name] = { command: program, ...(args.length ? { args } : {}), ...(env ? { env } : {}), ...(enabled === false ? { disabled: true } : {}) };
  });
  return issues.length > 0 ? { issues } : { value: { mcpServers: servers }, issues };
}
