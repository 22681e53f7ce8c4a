import { join, dirname } from 'node:path';
import { createDeadline } from '@capnode/toolkit';
import { DEFAULT_MCP_CLIENT_AGENT, mcpServerEntries, resolveMcpClientSettings, type McpClientSetup, type McpServerEntry } from '../../../config/mcpClientSettings.js';
import type { Settings } from '../../../config/settings.js';
import type { ImportedToolsStatus } from '../../../status/hostStatus.js';
import type { ServerEntryView, ServerItem, ServersView, ServerTestResult } from '../apiTypes.js';
import { apiError, json, readJsonBody } from '../reply.js';
import { maskSettings } from '../../../config/settingsPatch.js';
import type { DashboardHostView, Route, RouteContext } from '../types.js';

/**
 * The configured servers, secrets masked, each with its live diagnostic when the host connected it
 * (`GET /api/servers`, `app.servers.list`).
 */
export function serversView(settings: Settings, imports: ImportedToolsStatus, restartNeeded: readonly string[]): ServersView {
  const masked = maskSettings(settings) as { mcpClient?: { servers?: ServerEntryView[] } };
  const diagnostics = imports.servers;
  const servers = (masked.mcpClient?.servers ?? []).map((entry): ServerItem => {
    const status = diagnostics.find((diagnostic) => same(diagnostic.server, entry.name));
    return { name: entry.name, config: entry, enabled: entry.enabled !== false, ...(status ? { status } : {}) };
  });
  const { section: _section, ...policy } = toolPolicy(settings);
  return { reexport: imports.reexport, state: imports.state, servers, toolPolicy: policy, restartNeeded: restartNeeded.filter((path) => path.startsWith('mcpClient')) };
}

function listServers({ host }: RouteContext): Response {
  return json(200, serversView(host.settings.reload(), host.status().mcpClient, host.restartNeeded()));
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Per-tool choices of `PATCH /api/servers/:name` `tools`, keyed by the full `<server>__<tool>` name. */
type ToolChoice = { readonly enabled?: boolean; readonly approval?: 'auto' | 'ask' | 'default' };

/** The risk profile that governs the host's imported tools, and its per-tool lists. */
function toolPolicy(settings: Settings): { profile: string; excludedTools: string[]; autoApprove: string[]; alwaysAsk: string[]; section: Record<string, unknown> } {
  const section = (settings.mcpClient ?? {}) as Record<string, unknown>;
  const agent = typeof section.agent === 'string' ? section.agent : DEFAULT_MCP_CLIENT_AGENT;
  const agents = (section.agents ?? {}) as Record<string, { risk_profile?: string }>;
  const profile = agents[agent]?.risk_profile ?? agent;
  const entry = (((section.risk_profiles ?? {}) as Record<string, Record<string, unknown>>)[profile] ?? {}) as Record<string, unknown>;
  const list = (key: string) => (Array.isArray(entry[key]) ? (entry[key] as string[]) : []);
  return { profile, excludedTools: list('excluded_tools'), autoApprove: list('auto_approve'), alwaysAsk: list('always_ask'), section };
}

/** The `risk_profiles` change that applies `choices` (a tool is in at most one of auto_approve / always_ask). */
function toolPatch(settings: Settings, choices: Readonly<Record<string, ToolChoice>>): Record<string, unknown> {
  const policy = toolPolicy(settings);
  const without = (list: readonly string[], name: string) => list.filter((entry) => !same(entry, name));
  let { excludedTools, autoApprove, alwaysAsk } = policy;
  for (const [name, choice] of Object.entries(choices)) {
    if (choice.enabled !== undefined) excludedTools = choice.enabled ? without(excludedTools, name) : [...without(excludedTools, name), name];
    if (choice.approval !== undefined) {
      autoApprove = without(autoApprove, name);
      alwaysAsk = without(alwaysAsk, name);
      if (choice.approval === 'auto') autoApprove.push(name);
      if (choice.approval === 'ask') alwaysAsk.push(name);
    }
  }
  return { mcpClient: { risk_profiles: { [policy.profile]: { excluded_tools: excludedTools, auto_approve: autoApprove, always_ask: alwaysAsk } } } };
}

function readToolChoices(value: unknown): Record<string, ToolChoice> | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'tools must be an object keyed by tool name';
  for (const [name, choice] of Object.entries(value)) {
    if (!name.includes('__')) return `tool '${name}' must be named <server>__<tool>`;
    if (typeof choice !== 'object' || choice === null) return `tools.${name} must be { enabled?, approval? }`;
    const { enabled, approval, ...rest } = choice as Record<string, unknown>;
    if (Object.keys(rest).length) return `tools.${name} has unknown keys: ${Object.keys(rest).join(', ')}`;
    if (enabled !== undefined && typeof enabled !== 'boolean') return `tools.${name}.enabled must be true or false`;
    if (approval !== undefined && approval !== 'auto' && approval !== 'ask' && approval !== 'default') return `tools.${name}.approval must be 'auto', 'ask' or 'default'`;
  }
  return value as Record<string, ToolChoice>;
}

/** How long a server test may take to connect and list its tools. */
const TEST_TIMEOUT_MS = 30_000;

/**
 * Connects one configured server from the host process (enabled or not), lists its tools and closes
 * it again: its diagnostic (state, transport, connect time, error scrubbed of secrets) and tool names.
 */
async function testServer({ params, host, signal }: RouteContext): Promise<Response> {
  const setup = resolveMcpClientSettings(host.settings.reload());
  const server = setup.config.servers.find((candidate) => same(candidate.name, params.name ?? ''));
  if (!server) return apiError(404, 'not_found', `no MCP server '${params.name}'`);
  // A test starts the server's command (stdio) or connects to its URL: said in the host log.
  host.log('info', `dashboard: testing MCP server '${server.name}'`);
  const { createMcpRuntime } = await import('@capnode/mcp-client/node');
  using timer = createDeadline({ timeoutMs: TEST_TIMEOUT_MS, signal });
  const deadline = timer.signal;
  const config: McpClientSetup['config'] = { ...setup.config, enabled: true, deferredLoading: false, servers: [{ ...server, enabled: true }] };
  const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const runtime = await createMcpRuntime(config, {
    allServers: true,
    signal: deadline,
    logger: quiet,
    clientInfo: { name: 'capnode-dashboard', version: host.version },
    oauth: { dir: join(dirname(host.settings.path), 'oauth') },
  });
  try {
    const tools = Object.values(await runtime.tools({ signal: deadline })).filter((tool) => tool.server === server.name);
    const [diagnostic] = runtime.diagnostics();
    const ok = diagnostic?.state === 'connected' && diagnostic.listError === undefined;
    return json(200, { ok, ...(diagnostic ? { diagnostic } : {}), tools: tools.map(({ name, description }) => ({ name, description })) } satisfies ServerTestResult);
  } finally {
    await runtime.close();
  }
}

/** Writes `servers` as the whole server list through the validated settings patch (field errors by path). */
async function writeServers(host: DashboardHostView, servers: readonly McpServerEntry[], status: number): Promise<Response> {
  const result = await host.patchSettings({ mcpClient: { servers } });
  if (!result.ok) return apiError(400, 'invalid', result.message, result.fields);
  return json(status, { ok: true, restartNeeded: result.restartNeeded });
}

/**
 * `GET /api/servers`, `POST /api/servers` (a server entry as `capnode servers add` writes it; env
 * and header values are write-only: listed masked), `PATCH /api/servers/:name` `{ enabled?, tools? }`
 * (`tools`: `{ '<server>__<tool>': { enabled?, approval?: 'auto' | 'ask' | 'default' } }`, kept in the
 * agent's risk profile: `excluded_tools`, `auto_approve`, `always_ask`),
 * `DELETE /api/servers/:name`. The host connects servers when it starts (`restartNeeded`).
 */
export const serverRoutes: readonly Route[] = [
  ['GET', '/api/servers', listServers],
  ['POST', '/api/servers/:name/test', testServer],
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
      if (body.enabled !== undefined && typeof body.enabled !== 'boolean') return apiError(400, 'invalid', 'enabled must be true or false', [{ path: 'enabled', message: 'expected a boolean' }]);
      const name = params.name ?? '';
      const settings = host.settings.reload();
      const current = mcpServerEntries(settings);
      if (!current.some((entry) => same(entry.name, name))) return apiError(404, 'not_found', `no MCP server '${name}'`);
      const choices = body.tools === undefined ? undefined : readToolChoices(body.tools);
      if (typeof choices === 'string') return apiError(400, 'invalid', choices, [{ path: 'tools', message: choices }]);
      let patch: Record<string, unknown> = {};
      if (choices) patch = toolPatch(settings, choices);
      if (typeof body.enabled === 'boolean') {
        const servers = current.map((entry) => (same(entry.name, name) ? { ...entry, enabled: body.enabled as boolean } : entry));
        patch = { ...patch, mcpClient: { ...((patch.mcpClient as object | undefined) ?? {}), servers } };
      }
      const result = await host.patchSettings(patch);
      if (!result.ok) return apiError(400, 'invalid', result.message, result.fields);
      return json(200, { ok: true, restartNeeded: result.restartNeeded });
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
