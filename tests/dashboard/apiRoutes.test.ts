import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { formatApprovalSummary } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/poll.js';
import { createHost, type PendingView } from '@capnode/host';
import { connectHttpClient, startTestHost, tempDir } from '../support/testHost.js';
import { dashboardBase, eventReader, signIn } from './apiClient.js';
import { adminToken } from '../support/dashboardLogin.js';

const mcpToken = (home: string) => readFileSync(join(home, 'mcp-token'), 'utf8').trim();

const connect = (url: string, token: string): Promise<Client> => connectHttpClient(url, token, 'dashboard-test');

describe('dashboard approvals', () => {
  it('answers a system.run approval a real SDK v2 client waits on, with the hash that was shown', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const events = await client.api('/api/events');
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = eventReader(events);
    expect(await stream.next('status')).toMatchObject({ mcp: { state: 'listening' }, dashboard: { state: 'listening' }, pendingApprovals: 0 });
    await stream.next('approvals', (data) => (data as { pending: unknown[] }).pending.length === 0);

    const call = test.call('system.run', { command: [process.execPath, '-e', 'console.log("ran \\u001b[2Jhere")'] });
    const { pending } = (await stream.next('approvals', (data) => (data as { pending: unknown[] }).pending.length === 1)) as { pending: PendingView[] };
    const view = pending[0]!;
    const [approval] = test.host.approvals.list();
    expect(await stream.next('status', (data) => (data as { pendingApprovals: number }).pendingApprovals === 1)).toMatchObject({ execApprovals: { pending: 1 } });
    expect(view).toEqual({
      id: approval!.id,
      command: 'system.run',
      summary: formatApprovalSummary(approval!).join('\n'),
      argsHash: approval!.argsHash,
      transport: 'mcp-http',
      // The token it came with (the old single token is `default`), and the name it reports.
      client: 'default',
      caller: 'security-test',
      requestedAt: new Date(approval!.createdAt).toISOString(),
      expiresAt: new Date(approval!.expiresAt).toISOString(),
    });
    // The escape sequence in the argument is shown escaped, never raw.
    expect(view.summary).not.toContain('\u001b');
    expect(view.summary).toContain('\\u001b');
    expect(((await (await client.api('/api/approvals')).json()) as { pending: PendingView[] }).pending).toEqual([view]);

    const mismatch = await client.api(`/api/approvals/${view.id}`, { method: 'POST', body: { decision: 'allow-once', hash: 'sha256:0000' } });
    expect(mismatch.status).toBe(409);
    expect(((await mismatch.json()) as { error: { code: string } }).error.code).toBe('conflict');
    expect(test.host.approvals.list()).toHaveLength(1);
    const bad = await client.api(`/api/approvals/${view.id}`, { method: 'POST', body: { decision: 'sure', hash: view.argsHash } });
    expect(bad.status).toBe(400);
    const allowed = await client.api(`/api/approvals/${view.id}`, { method: 'POST', body: { decision: 'allow-once', hash: view.argsHash } });
    expect(allowed.status).toBe(200);
    const outcome = await call;
    expect(outcome.isError).toBe(false);
    expect(outcome.text).toContain('ran');
    await stream.next('approvals', (data) => (data as { pending: unknown[] }).pending.length === 0);
    expect((await client.api(`/api/approvals/${view.id}`, { method: 'POST', body: { decision: 'deny', hash: view.argsHash } })).status).toBe(404);
    await stream.cancel();
  });

  it('deny through the API refuses the waiting call', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const call = test.call('system.run', { command: ['true'] });
    const view = await eventually(async () => ((await (await client.api('/api/approvals')).json()) as { pending: PendingView[] }).pending[0], { what: 'a pending approval' });
    expect((await client.api(`/api/approvals/${view.id}`, { method: 'POST', body: { decision: 'deny', hash: view.argsHash } })).status).toBe(200);
    const outcome = await call;
    expect(outcome.isError).toBe(true);
    expect(outcome.text).toMatch(/denied/i);
  });
});

describe('dashboard token', () => {
  it('shows it masked, reveals it, and a rotation is seen by clients at once', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const old = mcpToken(test.home);
    const shown = (await (await client.api('/api/token')).json()) as { masked: string; path: string };
    expect(shown.path).toBe(join(test.home, 'mcp-token'));
    expect(shown.masked).toBe(`••••••••${old.slice(-4)}`);
    expect(shown.masked).not.toContain(old.slice(0, 8));
    expect((await client.api('/api/token/reveal', { method: 'POST' })).status).toBe(200);
    const rotated = await client.api('/api/token/rotate', { method: 'POST' });
    expect(rotated.status).toBe(200);
    const fresh = mcpToken(test.home);
    expect(fresh).not.toBe(old);
    expect(((await rotated.json()) as { masked: string }).masked).toBe(`••••••••${fresh.slice(-4)}`);
    expect(((await (await client.api('/api/token/reveal', { method: 'POST' })).json()) as { token: string }).token).toBe(fresh);
    // The client connected with the old token is refused now; one with the revealed token works.
    await expect(test.client.listTools()).rejects.toThrow();
    const next = await connect(test.url, fresh);
    expect((await next.listTools()).tools.length).toBeGreaterThan(0);
    await next.close();
  });
});

describe('dashboard settings', () => {
  it('rejects invalid values with errors per field path and writes nothing', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const before = readFileSync(join(test.home, 'settings.json'), 'utf8');
    const response = await client.api('/api/settings', { method: 'PATCH', body: { mcp: { port: 70_000, host: '0.0.0.0' }, execApprovals: { mode: 'sometimes' }, typo: true } });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; fields: { path: string; message: string }[] } };
    expect(error.code).toBe('invalid');
    const paths = error.fields.map((field) => field.path);
    expect(paths).toEqual(expect.arrayContaining(['mcp.port', 'mcp.host', 'execApprovals.mode']));
    expect(paths.some((path) => path === '(root)' || path.includes('typo'))).toBe(true);
    expect(readFileSync(join(test.home, 'settings.json'), 'utf8')).toBe(before);
    expect((await client.api('/api/settings', { method: 'PATCH', body: { mcp: { enabled: 'yes' } } })).status).toBe(400);
  });

  it('answers 409 while another process holds settings.json.lock past the deadline (dashboard and admin PATCH); nothing is written', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const path = join(test.home, 'settings.json');
    const before = readFileSync(path, 'utf8');
    // A live holder (this test process) with a fresh timestamp: the host waits its default 5 s, then gives up.
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.pid, token: 'test', at: Date.now() }), { mode: 0o600 });
    const response = await client.api('/api/settings', { method: 'PATCH', body: { approvals: { notify: false } } });
    expect(response.status).toBe(409);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('conflict');
    expect(error.message).toContain(`${path}.lock is held by pid ${process.pid}`);
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.pid, token: 'test', at: Date.now() }), { mode: 0o600 });
    const admin = await fetch(new URL('/_capnode/settings', test.url), { method: 'PATCH', headers: { authorization: `Bearer ${adminToken(test.home)}`, 'content-type': 'application/json' }, body: JSON.stringify({ approvals: { notify: false } }) });
    expect(admin.status).toBe(409);
    expect(((await admin.json()) as { code: string }).code).toBe('settings_locked');
    expect(readFileSync(path, 'utf8')).toBe(before);
    rmSync(`${path}.lock`);
    expect((await client.api('/api/settings', { method: 'PATCH', body: { approvals: { notify: false } } })).status).toBe(200);
  }, 60_000);

  it('applies the exec policy live, says restart needed for the port, and masks secrets', async () => {
    await using test = await startTestHost({ settings: { gateway: { token: 'gateway-secret-value' } } });
    const client = await signIn(test.host, test.home);
    const got = (await (await client.api('/api/settings')).json()) as { settings: { gateway: { token: string } }; restartNeeded: string[] };
    expect(got.settings.gateway.token).toBe('••••••••');
    expect(JSON.stringify(got)).not.toContain('gateway-secret-value');
    expect(got.restartNeeded).toEqual([]);

    const tested = (await (await client.api('/api/exec/test', { method: 'POST', body: { command: ['true'] } })).json()) as { decision: string; reason: string };
    expect(tested.decision).toBe('ask');
    const patched = await client.api('/api/settings', { method: 'PATCH', body: { execApprovals: { mode: 'full' }, mcp: { port: 9999 }, gateway: { token: '••••••••' } } });
    expect(patched.status).toBe(200);
    const result = (await patched.json()) as { applied: string[]; restartNeeded: string[]; settings: { gateway: { token: string } } };
    expect(result.applied).toEqual(['execApprovals.mode']);
    expect(result.restartNeeded).toEqual(['mcp.port']);
    // The masked token sent back kept the stored one.
    expect(test.host.settings.reload().gateway.token).toBe('gateway-secret-value');
    expect(((await (await client.api('/api/settings')).json()) as { restartNeeded: string[] }).restartNeeded).toEqual(['mcp.port']);
    expect(((await (await client.api('/api/exec/test', { method: 'POST', body: { command: ['true'] } })).json()) as { decision: string }).decision).toBe('allow');
    expect(((await (await client.api('/api/exec/test', { method: 'POST', body: { command: 'echo hi', shell: true } })).json()) as { decision: string }).decision).toBe('allow');
    const outcome = await test.call('system.run', { command: ['true'] });
    expect(outcome.isError).toBe(false);
    expect(test.asked).toHaveLength(0);
    const invalid = await client.api('/api/exec/test', { method: 'POST', body: { command: [] } });
    expect(invalid.status).toBe(400);
  });

  it('stops and starts the MCP listener live (dashboard and admin PATCH), keeping the admin routes reachable', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const off = await client.api('/api/settings', { method: 'PATCH', body: { mcp: { enabled: false } } });
    expect(((await off.json()) as { applied: string[] }).applied).toEqual(['mcp.enabled']);
    expect(test.host.status().mcp.state).toBe('disabled');
    await eventually(async () => fetch(test.url, { headers: { authorization: `Bearer ${mcpToken(test.home)}` } }).then(() => false, () => true), { what: 'the MCP listener to close' });
    const adminUrl = test.host.status().admin?.url;
    expect(adminUrl).toBeDefined();
    // The tray in attach mode turns it back on through the admin route.
    const on = await fetch(new URL('settings', adminUrl), { method: 'PATCH', headers: { authorization: `Bearer ${adminToken(test.home)}`, 'content-type': 'application/json' }, body: JSON.stringify({ mcp: { enabled: true } }) });
    expect(on.status).toBe(200);
    expect(((await on.json()) as { applied: string[] }).applied).toEqual(['mcp.enabled']);
    const status = test.host.status();
    expect(status.mcp.state).toBe('listening');
    const again = await connect(status.mcp.url!, mcpToken(test.home));
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    await again.close();
    const bad = await fetch(new URL('/_capnode/settings', status.mcp.url), { method: 'PATCH', headers: { authorization: `Bearer ${adminToken(test.home)}`, 'content-type': 'application/json' }, body: JSON.stringify({ approvals: { wait: 'never' } }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { fields: { path: string }[] }).fields.map((field) => field.path)).toEqual(['approvals.wait']);
    // The MCP token cannot change settings through the admin route.
    const agent = await fetch(new URL('/_capnode/settings', status.mcp.url), { method: 'PATCH', headers: { authorization: `Bearer ${mcpToken(test.home)}`, 'content-type': 'application/json' }, body: '{}' });
    expect(agent.status).toBe(401);
  });
});

describe('dashboard exec tester', () => {
  it('gives the verdict the exec hook would give, over every input: program, argv, cwd, env, shell', async () => {
    using dir = tempDir();
    await using test = await startTestHost({ settings: { execApprovals: { mode: 'allowlist', allowlist: ['git status', { pattern: 'ls *', cwd: dir.path }] } } });
    const client = await signIn(test.host, test.home);
    const verdict = async (body: Record<string, unknown>) => {
      const response = await client.api('/api/exec/test', { method: 'POST', body });
      return { status: response.status, ...((await response.json()) as { decision?: string; reason?: string }) };
    };
    expect(await verdict({ command: ['git', 'status'] })).toMatchObject({ status: 200, decision: 'allow' });
    expect(await verdict({ command: 'git status' })).toMatchObject({ decision: 'allow' });
    expect(await verdict({ command: ['git', 'status', '--porcelain'] })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/no allowlist entry/) });
    // A program named by path never passes for the bare name.
    expect(await verdict({ command: ['./git', 'status'] })).toMatchObject({ decision: 'deny' });
    expect(await verdict({ command: 'git status', shell: true })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/shell/) });
    expect(await verdict({ command: ['git', 'status'], env: { LD_PRELOAD: '/tmp/x.so' } })).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/LD_PRELOAD/) });
    // The cwd scope: inside it, yes; elsewhere, no; through a path that does not exist, a field error.
    expect(await verdict({ command: ['ls', '-l'], cwd: dir.path })).toMatchObject({ decision: 'allow' });
    expect(await verdict({ command: ['ls', '-l'], cwd: '/' })).toMatchObject({ decision: 'deny' });
    expect(await verdict({ command: ['ls'], cwd: join(dir.path, 'missing') })).toMatchObject({ status: 400 });
    expect(await verdict({ command: ['git'], env: { BAD: 1 } })).toMatchObject({ status: 400 });
    expect(await verdict({ command: [''] })).toMatchObject({ status: 400 });
    // Nothing ran and nobody was asked.
    expect(test.asked).toHaveLength(0);
  });
});

describe('dashboard settings that cannot apply', () => {
  it('says which live change failed (MCP port busy) and keeps the host serving the dashboard', async () => {
    using dir = tempDir();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      writeFileSync(join(dir.path, 'settings.json'), JSON.stringify({ mcp: { enabled: false, port } }), { mode: 0o600 });
      await using host = createHost({ home: dir.path, onLog: () => undefined });
      await host.start();
      expect(host.status().mcp.state).toBe('disabled');
      // In process (the tray): no admin listener is needed to sign in.
      const loginUrl = host.dashboardLoginUrl();
      const login = await fetch(loginUrl, { redirect: 'manual' });
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
      const origin = new URL(host.status().dashboard.url!).origin;
      const base = dashboardBase(loginUrl, login);
      const { csrfToken } = (await (await fetch(`${base}/api/session`, { headers: { cookie } })).json()) as { csrfToken: string };
      const response = await fetch(`${base}/api/settings`, { method: 'PATCH', headers: { cookie, origin, 'x-csrf-token': csrfToken, 'content-type': 'application/json' }, body: JSON.stringify({ mcp: { enabled: true } }) });
      expect(response.status).toBe(200);
      const result = (await response.json()) as { applied: string[]; failed: { path: string; message: string }[] };
      expect(result.applied).toEqual([]);
      expect(result.failed).toEqual([{ path: 'mcp.enabled', message: expect.stringMatching(/already in use/) }]);
      expect(host.status().mcp.state).toBe('error');
      expect((await fetch(`${base}/api/status`, { headers: { cookie } })).status).toBe(200);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});

describe('dashboard activity', () => {
  it('lists audit records newest first, filtered, with cursor pages', async () => {
    await using test = await startTestHost({ settings: { execApprovals: { mode: 'full' } } });
    const client = await signIn(test.host, test.home);
    for (let index = 0; index < 3; index += 1) await test.call('device.info', {});
    await test.call('system.run', { command: ['false'] });
    await test.call('system.run', { command: [] });
    await test.host.invoker.invoke({ command: 'device.info', args: {}, transport: 'cli' }).catch(() => undefined);
    type Row = { command: string; time: string; outcome: string; transport: string };
    const all: Row[] = await eventually(async () => {
      const page = (await (await client.api('/api/activity')).json()) as { records: Row[] };
      return page.records.length >= 6 ? page.records : undefined;
    }, { what: 'six audit records' });
    expect(all[0]!.transport).toBe('cli');
    expect([...all].sort((a, b) => b.time.localeCompare(a.time)).map((record) => record.time)).toEqual(all.map((record) => record.time));
    const mcpOnly = (await (await client.api('/api/activity?transport=mcp-http&tool=device.info')).json()) as { records: unknown[] };
    expect(mcpOnly.records).toHaveLength(3);
    const failed = (await (await client.api('/api/activity?outcome=error')).json()) as { records: { command: string; outcome: string }[] };
    expect(failed.records.length).toBeGreaterThan(0);
    expect(failed.records.every((record) => record.outcome !== 'ok')).toBe(true);
    expect(failed.records.every((record) => record.command === 'system.run')).toBe(true);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await (await client.api(`/api/activity?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json()) as { records: { time: string; command: string }[]; nextCursor?: string };
      seen.push(...page.records.map((record) => `${record.time} ${record.command}`));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((record) => `${record.time} ${record.command}`));
    expect((await client.api('/api/activity?limit=0')).status).toBe(400);
    expect((await client.api('/api/activity?cursor=nonsense')).status).toBe(400);
  });
});
