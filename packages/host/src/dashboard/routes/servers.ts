import { mcpServerEntries, type McpServerEntry } from '../../mcpClientSettings.js';
import { apiError, json, readJsonBody } from '../reply.js';
import { maskSettings } from '../settingsPatch.js';
import type { DashboardHostView, Route, RouteContext } from '../types.js';

/** The configured servers, secrets masked, each with its live diagnostic when the host connected it. */
function listServers({ host }: RouteContext): Response {
  const settings = host.settings.reload();
  const masked = maskSettings(settings) as { mcpClient?: { servers?: McpServerEntry[] } };
  const status = host.status() as { mcpClient?: { servers?: readonly { name?: string }[]; reexport?: boolean; state?: string } };
  const diagnostics = status.mcpClient?.servers ?? [];
  const servers = (masked.mcpClient?.servers ?? []).map((entry) => ({
    name: entry.name,
    config: entry,
    enabled: entry.enabled !== false,
    status: diagnostics.find((diagnostic) => diagnostic.name?.toLowerCase() === entry.name.toLowerCase()),
  }));
  return json(200, { reexport: status.mcpClient?.reexport ?? false, state: status.mcpClient?.state ?? 'off', servers, restartNeeded: host.restartNeeded().filter((path) => path.startsWith('mcpClient')) });
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Writes `servers` as the whole server list through the validated settings patch (field errors by path). */
async function writeServers(host: DashboardHostView, servers: readonly McpServerEntry[], status: number): Promise<Response> {
  const result = await host.patchSettings({ mcpClient: { servers } });
  if (!result.ok) return apiError(400, 'invalid', result.message, result.fields);
  return json(status, { ok: true, restartNeeded: result.restartNeeded });
}

/**
 * `GET /api/servers`, `POST /api/servers` (a server entry as `capnode servers add` writes it; env
 * and header values are write-only: listed masked), `PATCH /api/servers/:name` `{ enabled }`,
 * `DELETE /api/servers/:name`. The host connects servers when it starts (`restartNeeded`).
 */
export const serverRoutes: readonly Route[] = [
  ['GET', '/api/servers', listServers],
  [
    'POST',
    '/api/servers',
    async ({ request, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      if (typeof body.name !== 'string' || !body.name) return apiError(400, 'invalid', 'name is required', [{ path: 'name', message: 'required' }]);
      const current = mcpServerEntries(host.settings.reload());
      if (current.some((entry) => same(entry.name, body.name as string))) return apiError(409, 'conflict', `an MCP server named '${body.name}' is already configured`);
      return writeServers(host, [...current, body as McpServerEntry], 201);
    },
  ],
  [
    'PATCH',
    '/api/servers/:name',
    async ({ request, params, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      if (typeof body.enabled !== 'boolean') return apiError(400, 'invalid', 'enabled must be true or false', [{ path: 'enabled', message: 'expected a boolean' }]);
      const name = params.name ?? '';
      const current = mcpServerEntries(host.settings.reload());
      if (!current.some((entry) => same(entry.name, name))) return apiError(404, 'not_found', `no MCP server '${name}'`);
      return writeServers(host, current.map((entry) => (same(entry.name, name) ? { ...entry, enabled: body.enabled as boolean } : entry)), 200);
    },
  ],
  [
    'DELETE',
    '/api/servers/:name',
    async ({ params, host }) => {
      const name = params.name ?? '';
      const current = mcpServerEntries(host.settings.reload());
      if (!current.some((entry) => same(entry.name, name))) return apiError(404, 'not_found', `no MCP server '${name}'`);
      return writeServers(host, current.filter((entry) => !same(entry.name, name)), 200);
    },
  ],
];
