import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { importMcpServers, type ImportedServer } from '@capnode/mcp-client';
import { clientConfigPath } from '../../../setup/clientConfigs.js';
import { hostSelfIdentity } from '../../../config/selfIdentity.js';
import { mcpServerEntries, type McpServerEntry } from '../../../config/mcpClientSettings.js';
import type { DiscoveredConfig, DiscoveredView, ServerImportResult } from '../apiTypes.js';
import { apiError, json, readJsonBody } from '../reply.js';
import type { DashboardHostView, Route } from '../types.js';

/** Largest client config file read. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** The MCP client config files of this user, by client, for this platform: where `capnode config` writes them, and Claude Code's `~/.mcp.json`. */
export function clientConfigFiles(home: string, env: Readonly<Record<string, string | undefined>>, platform: NodeJS.Platform = process.platform): { client: string; path: string }[] {
  const at = { platform, userHome: home, env };
  return [
    { client: 'Claude Desktop', path: clientConfigPath('claude-desktop', at) },
    { client: 'Claude Code', path: clientConfigPath('claude', at) },
    { client: 'Claude Code', path: join(home, '.mcp.json') },
    { client: 'Cursor', path: clientConfigPath('cursor', at) },
    { client: 'VS Code', path: clientConfigPath('vscode', at) },
  ];
}

/** Reads a client config; entries that are this host itself are left out (see `hostSelfIdentity`). */
function readImport(path: string, host: DashboardHostView) {
  const stats = statSync(path);
  if (!stats.isFile() || stats.size > MAX_CONFIG_BYTES) throw new Error('not a regular file of at most 4 MiB');
  const self = hostSelfIdentity(host.paths, () => host.settings.get().mcp.port);
  return importMcpServers(JSON.parse(readFileSync(path, 'utf8')), { env: host.env, home: host.userHome, workspaceFolder: dirname(path), self });
}

/** Only what a list needs: name and kind, never env, headers or args (they can hold secrets). */
function describeServer(server: ImportedServer, configured: ReadonlySet<string>) {
  const transport = typeof server.type === 'string' ? server.type : typeof server.url === 'string' ? 'http' : 'stdio';
  return { name: server.name, transport, configured: configured.has(server.name.toLowerCase()) };
}

function discovered(host: DashboardHostView): Response {
  const configured = new Set(mcpServerEntries(host.settings.reload()).map((entry) => entry.name.toLowerCase()));
  const files: DiscoveredConfig[] = [];
  for (const { client, path } of clientConfigFiles(host.userHome, host.env)) {
    let result;
    try {
      result = readImport(path, host);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      files.push({ client, path, servers: [], error: `cannot read it: ${(error as Error).message.slice(0, 200)}` });
      continue;
    }
    if (result.servers.length === 0 && result.issues.length === 0) continue;
    files.push({ client, path, servers: result.servers.map((server) => describeServer(server, configured)), issues: result.issues.map((issue) => `${issue.path}: ${issue.message}`) });
  }
  return json(200, { files } satisfies DiscoveredView);
}

/**
 * `GET /api/servers/discovered` (the Claude Desktop, Claude Code, Cursor and VS Code MCP configs of
 * this user, each server by name and kind) and `POST /api/servers/import` `{ path, names? }` (adds
 * those servers; names already configured are skipped; a file that does not validate adds nothing).
 */
export const serverImportRoutes: readonly Route[] = [
  ['GET', '/api/servers/discovered', ({ host }) => discovered(host)],
  [
    'POST',
    '/api/servers/import',
    async ({ request, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      const { path, names } = body;
      if (typeof path !== 'string' || !isAbsolute(path) || !basename(path).endsWith('.json')) return apiError(400, 'invalid', 'path must be the absolute path of a .json MCP config', [{ path: 'path', message: 'expected an absolute .json path' }]);
      if (names !== undefined && !(Array.isArray(names) && names.every((name) => typeof name === 'string'))) return apiError(400, 'invalid', 'names must be a list of server names', [{ path: 'names', message: 'expected strings' }]);
      let result;
      try {
        result = readImport(path, host);
      } catch (error) {
        return apiError(400, 'invalid', `cannot read ${path}: ${(error as Error).message.slice(0, 200)}`, [{ path: 'path', message: 'unreadable' }]);
      }
      if (result.issues.length > 0) return apiError(400, 'invalid', `cannot import ${path}; nothing was changed`, result.issues.map((issue) => ({ path: issue.path, message: issue.message })));
      const current = mcpServerEntries(host.settings.reload());
      const existing = new Set(current.map((entry) => entry.name.toLowerCase()));
      const wanted = names === undefined ? undefined : new Set((names as string[]).map((name) => name.toLowerCase()));
      const chosen = result.servers.filter((server) => wanted === undefined || wanted.has(server.name.toLowerCase()));
      const fresh = chosen.filter((server) => !existing.has(server.name.toLowerCase()));
      const skipped = chosen.filter((server) => existing.has(server.name.toLowerCase())).map((server) => server.name);
      if (fresh.length > 0) {
        const patched = await host.patchSettings({ mcpClient: { servers: [...current, ...(fresh as McpServerEntry[])] } });
        if (!patched.ok) return apiError(400, 'invalid', patched.message, patched.fields);
      }
      return json(200, { imported: fresh.map((server) => server.name), skipped, restartNeeded: host.restartNeeded() } satisfies ServerImportResult);
    },
  ],
];
