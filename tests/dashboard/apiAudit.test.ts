import { readFileSync } from 'node:fs';
import type { AuditRecord } from '@capnode/host';
import { describe, expect, it } from 'vitest';
import { adminToken } from '../support/dashboardLogin.js';
import { eventually } from '../support/poll.js';
import { startTestHost } from '../support/testHost.js';
import { signIn, type DashboardClient } from './apiClient.js';

const SERVER_SECRET = 'sk-audit-server-secret-7f3a9c1e';
const NEW_SERVER_SECRET = 'sk-audit-server-secret-rotated-5d0e';
const GATEWAY_SECRET = 'gateway-audit-secret-2b8d4e6f';

async function activity(client: DashboardClient, query: string): Promise<AuditRecord[]> {
  const response = await client.api(`/api/activity?${query}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { records: AuditRecord[] }).records;
}

describe('dashboard and admin changes in audit.log', () => {
  it('records settings changes by path, never value, with their transport, and Activity lists them', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);

    const policy = await client.api('/api/settings', { method: 'PATCH', body: { execApprovals: { mode: 'allowlist', allowlist: [{ pattern: '/usr/bin/ls' }] } } });
    expect(policy.status).toBe(200);
    const server = await client.api('/api/servers', { method: 'POST', body: { name: 'vault', command: process.execPath, args: ['server.js'], env: { VAULT_API_KEY: SERVER_SECRET } } });
    expect(server.status).toBe(201);
    const secret = await client.api('/api/settings', { method: 'PATCH', body: { mcpClient: { servers: [{ name: 'vault', command: process.execPath, args: ['server.js'], env: { VAULT_API_KEY: NEW_SERVER_SECRET } }] } } });
    expect(secret.status).toBe(200);
    const gateway = await client.api('/api/gateway', { method: 'PUT', body: { url: 'ws://127.0.0.1:9/', token: GATEWAY_SECRET, enabled: false } });
    expect(gateway.status).toBe(200);
    const refused = await client.api('/api/settings', { method: 'PATCH', body: { mcp: { port: 'not a port' } } });
    expect(refused.status).toBe(400);
    expect((await client.api('/api/token/reveal', { method: 'POST' })).status).toBe(200);
    expect((await client.api('/api/token/rotate', { method: 'POST' })).status).toBe(200);

    const adminBase = new URL('/_capnode/', test.host.status().mcp.url!);
    const admin = await fetch(new URL('settings', adminBase), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminToken(test.home)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ consent: { screen: 'allow' } }),
    });
    expect(admin.status, await admin.clone().text()).toBe(200);
    expect((await fetch(new URL('token/rotate', adminBase), { method: 'POST', headers: { authorization: `Bearer ${adminToken(test.home)}` } })).status).toBe(200);

    const fromDashboard = await eventually(async () => {
      const records = await activity(client, 'transport=dashboard&limit=500');
      return records.some((record) => record.command === 'capnode.token.rotate') ? records : undefined;
    });
    const settings = fromDashboard.filter((record) => record.command === 'capnode.settings').reverse();
    expect(settings.map(({ outcome, changed }) => ({ outcome, changed }))).toEqual([
      { outcome: 'ok', changed: expect.arrayContaining(['execApprovals.mode', 'execApprovals.allowlist']) },
      // The first server creates the section; then a secret changed in the server list.
      { outcome: 'ok', changed: ['mcpClient'] },
      { outcome: 'ok', changed: ['mcpClient.servers'] },
      { outcome: 'ok', changed: expect.arrayContaining(['gateway.url', 'gateway.token']) },
      { outcome: 'invalid_settings', changed: ['mcp.port'] },
    ]);
    expect(fromDashboard.every((record) => record.transport === 'dashboard')).toBe(true);
    expect(fromDashboard.map((record) => record.command)).toEqual(expect.arrayContaining(['capnode.session.signin', 'capnode.token.reveal']));

    const fromAdmin = await eventually(async () => {
      const records = await activity(client, 'transport=admin');
      return records.length === 2 ? records : undefined;
    });
    expect(fromAdmin.map(({ command, outcome, changed }) => ({ command, outcome, changed }))).toEqual([
      { command: 'capnode.token.rotate', outcome: 'ok', changed: undefined },
      { command: 'capnode.settings', outcome: 'ok', changed: ['consent.screen'] },
    ]);
    // The tool and outcome filters work on them too.
    expect((await activity(client, 'tool=capnode.settings&outcome=error')).map((record) => record.changed)).toEqual([['mcp.port']]);

    const log = readFileSync(test.host.paths.auditLog, 'utf8');
    expect(log).not.toContain(SERVER_SECRET);
    expect(log).not.toContain(NEW_SERVER_SECRET);
    expect(log).not.toContain('VAULT_API_KEY');
    expect(log).not.toContain(GATEWAY_SECRET);
    expect(log).not.toContain('/usr/bin/ls');
    expect(log).not.toContain('allow"');
  });

  it('records a dashboard sign-out', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const other = await signIn(test.host, test.home);
    expect((await client.api('/api/session', { method: 'DELETE' })).status).toBe(200);
    const records = await eventually(async () => {
      const page = await activity(other, 'transport=dashboard');
      return page.some((record) => record.command === 'capnode.session.signout') ? page : undefined;
    });
    expect(records.map((record) => record.command)).toEqual(['capnode.session.signout', 'capnode.session.signin', 'capnode.session.signin']);
  });
});
