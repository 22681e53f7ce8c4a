import { isPlainObject } from '@capnode/toolkit';
import type { ConfigIssue } from './errors.js';
import { formatConfigPath } from './config.js';
import { expandEnvReferences } from './internal/envReferences.js';
import { selfEntryReason, type SelfHostIdentity } from './selfHost.js';

/** Config file formats {@link importMcpServers} understands. */
export type ImportFormat = 'auto' | 'claude' | 'cursor' | 'vscode';

export interface ImportOptions {
  /** `auto` (default) reads `mcpServers` (Claude Desktop, Claude Code `.mcp.json`, Cursor) or `servers` (VS Code). */
  readonly format?: ImportFormat;
  /**
   * Variables for `${NAME}`, `${NAME:-default}` (Claude Code) and `${env:NAME}` (Cursor, VS Code)
   * references. Without it references stay as written and each one is reported as a warning.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Value of Cursor's `${userHome}`. */
  readonly home?: string;
  /** Value of `${workspaceFolder}`. */
  readonly workspaceFolder?: string;
  /**
   * The importing capnode host: an entry that is this host (its MCP URL, or `capnode mcp` for the
   * same config directory) is skipped with a warning, since importing it would re-export capnode into itself.
   */
  readonly self?: SelfHostIdentity;
}

/** One server entry in this package's config shape, ready to put under `servers` and validate. */
export type ImportedServer = Record<string, unknown> & { name: string };

/** What {@link importMcpServers} found: entries to validate, warnings for what was ignored, and errors. */
export interface ImportResult {
  readonly servers: readonly ImportedServer[];
  readonly warnings: readonly ConfigIssue[];
  readonly issues: readonly ConfigIssue[];
}

const TYPE_MAP: Record<string, string> = {
  stdio: 'stdio',
  sse: 'sse',
  http: 'http',
  'streamable-http': 'http',
  streamablehttp: 'http',
  streamable_http: 'http',
};
const COPIED = ['command', 'args', 'env', 'cwd', 'url', 'headers'] as const;
const IGNORED_WITH_REASON: Record<string, string> = {
  autoApprove: 'approval is set in risk_profiles (auto_approve)',
  alwaysAllow: 'approval is set in risk_profiles (auto_approve)',
  envFile: 'env files are not read; put the variables in env',
  description: 'not used',
};

/**
 * Reads the MCP server list of Claude Desktop (`claude_desktop_config.json`), Claude Code (`.mcp.json`),
 * Cursor (`mcp.json`) or VS Code (`.vscode/mcp.json`) into this package's server entries.
 *
 * The result is not yet validated: put `servers` into a config and run {@link validateMcpConfig}, which
 * applies every rule (refused env keys, timeouts, URLs). Keys with no equivalent are reported as
 * warnings, never silently dropped.
 *
 * @example
 * const imported = importMcpServers(JSON.parse(readFileSync('.mcp.json', 'utf8')), { env: process.env });
 * const { config } = parseMcpConfig({ servers: imported.servers, bundles: { all: { servers: imported.servers.map((s) => s.name) } } });
 */
export function importMcpServers(input: unknown, options: ImportOptions = {}): ImportResult {
  const warnings: ConfigIssue[] = [];
  const issues: ConfigIssue[] = [];
  const servers: ImportedServer[] = [];
  const format = options.format ?? 'auto';
  if (!isPlainObject(input)) return { servers, warnings, issues: [{ path: '(root)', message: 'must be a JSON object' }] };

  const key = format === 'vscode' ? 'servers' : format === 'auto' && !('mcpServers' in input) && 'servers' in input ? 'servers' : 'mcpServers';
  const table = input[key];
  if (table === undefined) return { servers, warnings, issues: [{ path: key, message: 'is missing: no MCP servers in this file' }] };
  if (!isPlainObject(table)) return { servers, warnings, issues: [{ path: key, message: 'must be an object keyed by server name' }] };

  /** `literal`: the result goes into `env` or `headers`, where capnode expands `${…}` again, so a `${` in a variable's value is escaped. */
  const expand = (value: string, path: string, literal: boolean): string =>
    expandEnvReferences(value, {
      escape: false,
      resolve: ({ special, name, fallback, whole }) => {
        if (special === 'userHome' && options.home !== undefined) return options.home;
        if (special === 'workspaceFolder' && options.workspaceFolder !== undefined) return options.workspaceFolder;
        if (special !== undefined) {
          issues.push({ path, message: `uses \${${special}}, which was not provided` });
          return whole;
        }
        if (options.env === undefined) {
          warnings.push({ path, message: `references \${${name}}; pass env to expand it` });
          return whole;
        }
        const found = options.env[name!] ?? fallback;
        if (found !== undefined) return literal ? found.replaceAll('${', () => '$${') : found;
        issues.push({ path, message: `references the unset environment variable ${name}` });
        return whole;
      },
    });

  const expandDeep = (value: unknown, path: readonly PropertyKey[]): unknown => {
    if (typeof value === 'string') return expand(value, formatConfigPath(path), path[2] === 'env' || path[2] === 'headers');
    if (Array.isArray(value)) return value.map((item, index) => expandDeep(item, [...path, index]));
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandDeep(v, [...path, k])]));
    return value;
  };

  for (const [name, entry] of Object.entries(table)) {
    const at = (...rest: PropertyKey[]) => formatConfigPath([key, name, ...rest]);
    if (!isPlainObject(entry)) {
      issues.push({ path: at(), message: 'must be an object' });
      continue;
    }
    const server: ImportedServer = { name };
    for (const field of COPIED) {
      if (entry[field] !== undefined) server[field] = expandDeep(entry[field], [key, name, field]);
    }
    if (entry.type !== undefined) {
      const mapped = typeof entry.type === 'string' ? TYPE_MAP[entry.type.toLowerCase()] : undefined;
      if (mapped === undefined) issues.push({ path: at('type'), message: "must be 'stdio', 'sse', 'http' or 'streamable-http'" });
      else server.transport = mapped;
    }
    if (entry.disabled !== undefined) {
      if (typeof entry.disabled === 'boolean') server.enabled = !entry.disabled;
      else issues.push({ path: at('disabled'), message: 'must be a boolean' });
    }
    if (entry.timeout !== undefined) {
      if (typeof entry.timeout === 'number') server.tool_timeout_secs = entry.timeout;
      else issues.push({ path: at('timeout'), message: 'must be a number of seconds' });
    }
    for (const field of Object.keys(entry)) {
      if ((COPIED as readonly string[]).includes(field) || ['type', 'disabled', 'timeout'].includes(field)) continue;
      warnings.push({ path: at(field), message: `ignored: ${IGNORED_WITH_REASON[field] ?? 'no equivalent in capnode'}` });
    }
    const selfReason = options.self === undefined ? undefined : selfEntryReason(server, options.self);
    if (selfReason !== undefined) {
      warnings.push({ path: at(), message: `skipped: ${selfReason}; importing capnode into itself would offer its tools back to it` });
      continue;
    }
    servers.push(server);
  }
  return { servers, warnings, issues };
}
