import type { AnsweredApproval, PendingApproval } from '@capnode/capabilities';
import { escapeForDisplay } from '@capnode/capabilities/display';
import type { HostStatus } from '@capnode/host';
import { adminEndpoints, mcpEndpoint, type Context } from '../context.js';
import type { CallResult } from '../output.js';
import { formatContent } from '../output.js';
import { rpcCall } from '../rpc.js';
import { admin, formatAllowed, isAllowedApproval, isPendingApproval } from './approvals.js';

/** `label:` padded so the values line up. */
function row(label: string, value: string): string {
  return `  ${`${label}:`.padEnd(16)}${value}`;
}

function ago(iso: string | undefined, now: number): string {
  if (!iso) return '';
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (!Number.isFinite(seconds)) return '';
  return seconds >= 0 ? `in ${seconds} s` : `${-seconds} s ago`;
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

function hostSection(status: HostStatus): string[] {
  const lines = [`capnode ${status.version} — pid ${status.pid}, up ${duration(status.uptimeSeconds)}`, row('config', status.home)];
  lines.push('', 'MCP server');
  const mcp = status.mcp;
  lines.push(row('state', mcp.state + (mcp.state === 'listening' && mcp.url ? ` on ${mcp.url}` : '')));
  if (mcp.error) lines.push(row('error', escapeForDisplay(mcp.error)));
  lines.push(row('token file', `${mcp.tokenPath}   (capnode token show)`));
  if (mcp.inFlight !== undefined) lines.push(row('in flight', String(mcp.inFlight)));
  lines.push(row('stdio', status.stdio.state + (status.stdio.adminUrl ? ` (admin ${status.stdio.adminUrl})` : '')));
  lines.push(row('tools', `${status.capabilities.commands} (${status.capabilities.categories.join(', ')})`));
  return lines;
}

function nodeSection(status: HostStatus, now: number): string[] {
  const node = status.node;
  const lines = ['', 'Gateway node'];
  if (!node.enabled) return [...lines, row('state', 'off   (connect one: capnode serve --gateway ws://<host>:18789)')];
  lines.push(row('state', node.state), row('gateway', node.url ?? '?'));
  if (node.nodeId) lines.push(row('node id', node.nodeId));
  if (node.pairing) lines.push(row('pairing', `${node.pairing.state}${node.pairing.requestId ? ` (request ${node.pairing.requestId})` : ''}`));
  if (node.lastError) lines.push(row('last error', `${node.lastError.code}: ${escapeForDisplay(node.lastError.message)}`));
  if (node.nextRetryAt) lines.push(row('next retry', ago(node.nextRetryAt, now)));
  lines.push(row('detail', escapeForDisplay(node.detail)));
  lines.push(row('channel', status.channel.enabled ? 'on' : 'off'));
  return lines;
}

function openagentSection(status: HostStatus, now: number): string[] {
  const openagent = status.openagent;
  if (!openagent) return [];
  const lines = ['', 'OpenAgent client capabilities', row('phase', `${openagent.phase}   (switch: capnode openagent ${openagent.enabled ? 'disable' : 'enable'})`)];
  if (!openagent.enabled) return lines;
  if (openagent.url) lines.push(row('server', openagent.url));
  lines.push(row('instance', `${openagent.clientInstanceId}, generation ${openagent.generation}`), row('calls', `${openagent.activeCalls} running`));
  lines.push(row('catalog', `${openagent.catalog.servers} servers, ${openagent.catalog.tools} tools`));
  if (openagent.lastError) lines.push(row('last error', escapeForDisplay(openagent.lastError)));
  if (openagent.nextRetryAt) lines.push(row('next retry', ago(openagent.nextRetryAt, now)));
  return lines;
}

function importedSection(status: HostStatus, now: number): string[] {
  const imports = status.mcpClient;
  const lines = ['', 'Imported MCP servers'];
  if (!imports.reexport) return [...lines, row('state', `off   (${imports.servers.length === 0 ? 'add one: capnode servers add' : 'serve them: capnode servers reexport on'})`)];
  lines.push(row('state', `${imports.state}, ${imports.toolCount} tools, agent ${imports.agent}`));
  if (imports.error) lines.push(row('error', escapeForDisplay(imports.error)));
  for (const server of imports.servers) {
    const connect = server.connectMs === undefined ? '' : `, ${server.connectMs} ms`;
    lines.push(`  ${escapeForDisplay(server.server)}: ${server.state} (${server.transport}${connect}) — ${server.toolCount} tools`);
    if (server.error) lines.push(`      error: ${escapeForDisplay(server.error)}${server.errorCode === 'auth_required' ? `   (capnode servers login ${server.server})` : ''}`);
    if (server.listError) lines.push(`      listing: ${escapeForDisplay(server.listError)}`);
    if (server.pausedUntil) lines.push(`      paused until ${server.pausedUntil} (${ago(server.pausedUntil, now)})`);
  }
  for (const warning of imports.warnings) lines.push(`  warning: ${escapeForDisplay(warning)}`);
  return lines;
}

function approvalsSection(status: HostStatus, pending: readonly PendingApproval[] | undefined, now: number, allowed: readonly AnsweredApproval[]): string[] {
  const approvals = status.execApprovals;
  const lines = ['', 'Approvals', row('exec mode', `${approvals.mode}, ${approvals.allowlist} allowlisted`)];
  const count = pending?.length ?? approvals.pending;
  lines.push(row('pending', count === 0 ? 'none' : `${count}   (answer: capnode approvals watch)`));
  for (const approval of pending ?? []) {
    lines.push(`  ${escapeForDisplay(approval.id)}  ${escapeForDisplay(approval.commandLine)}  (denied in ${Math.max(0, Math.round((approval.expiresAt - now) / 1000))} s)`);
  }
  for (const approval of allowed) lines.push(`  ${formatAllowed(approval, now)}`);
  return lines;
}

function dashboardSection(status: HostStatus): string[] {
  // A host of an older version reports no dashboard.
  const dashboard = status.dashboard as HostStatus['dashboard'] | undefined;
  if (!dashboard) return [];
  const lines = ['', 'Dashboard'];
  if (dashboard.state === 'disabled') return [...lines, row('state', 'off   (turn it on: dashboard.enabled in settings.json)')];
  lines.push(row('state', dashboard.state === 'listening' && dashboard.url ? `listening on ${dashboard.url}   (open it: capnode ui)` : dashboard.state));
  if (dashboard.error) lines.push(row('error', escapeForDisplay(dashboard.error)));
  return lines;
}

function pluginsSection(status: HostStatus): string[] {
  const plugins = (status.plugins as HostStatus['plugins'] | undefined) ?? [];
  if (plugins.length === 0) return [];
  const loaded = plugins.filter((plugin) => plugin.state === 'loaded').length;
  const lines = ['', 'Plugins', row('loaded', `${loaded} of ${plugins.length}   (list them: capnode plugins list)`)];
  for (const plugin of plugins) {
    if (plugin.state === 'failed') lines.push(row('failed', `${escapeForDisplay(plugin.name)} (${escapeForDisplay(plugin.source)}): ${escapeForDisplay(plugin.error ?? 'unknown error')}`));
    else if (plugin.error) lines.push(row('reload failed', `${escapeForDisplay(plugin.name)} (${escapeForDisplay(plugin.source)}): ${escapeForDisplay(plugin.error)}`));
  }
  const unavailable = plugins.flatMap((plugin) => plugin.unavailable);
  if (unavailable.length) lines.push(row('unavailable', `${unavailable.length} command${unavailable.length === 1 ? '' : 's'} (listed, fail until installed)`));
  for (const missing of unavailable) lines.push(`    ${escapeForDisplay(missing.command)}: install ${escapeForDisplay(missing.install)}`);
  return lines;
}

function auditSection(status: HostStatus): string[] {
  const audit = status.audit;
  const dropped = audit.dropped ? `, ${audit.dropped} DROPPED (disk full or stalled)` : '';
  return ['', 'Audit log', row('file', `${audit.path} (${audit.written} records${dropped})`)];
}

/** The host's status as sections for a terminal: MCP server, dashboard, gateway node, imported servers, plugins, approvals, audit. */
export function formatStatus(status: HostStatus, pending?: readonly PendingApproval[], now = Date.now(), allowed: readonly AnsweredApproval[] = []): string {
  return [
    ...hostSection(status),
    ...dashboardSection(status),
    ...nodeSection(status, now),
    ...openagentSection(status, now),
    ...importedSection(status, now),
    ...pluginsSection(status),
    ...approvalsSection(status, pending, now, allowed),
    ...auditSection(status),
  ].join('\n');
}

function isHostStatus(value: unknown): value is HostStatus {
  const status = value as Partial<HostStatus> | null;
  return typeof status === 'object' && status !== null && typeof status.mcp === 'object' && typeof status.node === 'object' && typeof status.execApprovals === 'object' && typeof status.mcpClient === 'object';
}

/** The pending approvals of the host and the answers it keeps for a retry, best effort (no admin token, another version: the count suffices). */
async function pendingOf(context: Context): Promise<{ pending?: PendingApproval[]; allowed: AnsweredApproval[] }> {
  try {
    const endpoint = adminEndpoints(context)[0];
    if (!endpoint?.token) return { allowed: [] };
    const answer = await admin(endpoint, 'approvals');
    const allowed = Array.isArray(answer.value.allowed) ? (answer.value.allowed as unknown[]).filter(isAllowedApproval) : [];
    return Array.isArray(answer.value.approvals) ? { pending: (answer.value.approvals as unknown[]).filter(isPendingApproval), allowed } : { allowed };
  } catch {
    return { allowed: [] };
  }
}

/** `capnode status`: the running host's own report (the local-only `app.status` tool); `--json` prints it unchanged. */
export async function status(context: Context): Promise<number> {
  const result = (await rpcCall(mcpEndpoint(context), 'tools/call', { name: 'app.status', arguments: {} })) as CallResult;
  if (context.json) {
    context.out(JSON.stringify(result.structuredContent ?? result, null, 2));
    return result.isError ? 1 : 0;
  }
  if (result.isError || !isHostStatus(result.structuredContent)) {
    context.out(formatContent(result.content ?? []));
    return result.isError ? 1 : 0;
  }
  const { pending, allowed } = await pendingOf(context);
  context.out(formatStatus(result.structuredContent, pending, Date.now(), allowed));
  return 0;
}
