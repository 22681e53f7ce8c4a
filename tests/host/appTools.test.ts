import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/testHost.js';
import { eventually } from '../support/poll.js';
import { cliPath, repoRoot, runCli, slowPoll, tempHome } from '../cli/helpers.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');
const { StdioClientTransport } = requireFromCli('@modelcontextprotocol/client/stdio') as typeof import('@modelcontextprotocol/client/stdio');

const GATEWAY_TOKEN = 'gw-token-0123456789abcdefSECRET';
const SERVER_SECRET = 'srv-api-key-0123456789abcdefSECRET';
const HEADER_SECRET = 'Bearer oa-header-0123456789abcdefSECRET';
const NEW_TOKEN = 'new-gw-token-9876543210zyxwvuSECRET';

const APP_TOOLS = [
  'app.status',
  'app.settings.get',
  'app.settings.set',
  'app.approvals.list',
  'app.connection.status',
  'app.connection.gateways',
  'app.connection.reconnect',
  'app.pairing.list',
  'app.pairing.approve',
  'app.pairing.reject',
  'app.dashboard.url',
  'app.plugins.list',
  'app.servers.list',
];

/** Settings holding one secret of each kind: gateway token, an imported server's env value, an OpenAgent handshake header. */
const SECRET_SETTINGS = {
  approvals: { wait: 'block', notify: false },
  gateway: { enabled: false, url: 'ws://127.0.0.1:9', token: GATEWAY_TOKEN },
  openagent: { headers: { Authorization: HEADER_SECRET } },
  mcpClient: { servers: [{ name: 'vault', command: process.execPath, args: ['server.js'], env: { VAULT_API_KEY: SERVER_SECRET } }] },
};

function secretsOf(home: string): string[] {
  return [GATEWAY_TOKEN, SERVER_SECRET, HEADER_SECRET, 'oa-header-0123456789abcdefSECRET', readFileSync(join(home, 'mcp-token'), 'utf8').trim(), readFileSync(join(home, 'admin-token'), 'utf8').trim()];
}

function expectNoSecret(output: string, secrets: readonly string[]): void {
  for (const secret of secrets) expect(output, `leaked ${secret.slice(0, 6)}…`).not.toContain(secret);
}

async function settingsFile(home: string): Promise<Record<string, any>> {
  return JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as Record<string, any>;
}

describe('app.* over MCP HTTP (real SDK v2 client)', () => {
  it('lists every app tool and answers each one without a secret in any output', async () => {
    await using test = await startTestHost({ settings: SECRET_SETTINGS, host: { builtinPlugins: false } });
    const { tools } = await test.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(APP_TOOLS));
    const secrets = secretsOf(test.home);
    const outputs: Record<string, Awaited<ReturnType<TestHost['call']>>> = {};
    for (const name of ['app.status', 'app.settings.get', 'app.approvals.list', 'app.connection.status', 'app.connection.gateways', 'app.pairing.list', 'app.dashboard.url', 'app.plugins.list', 'app.servers.list', 'app.connection.reconnect', 'app.pairing.reject']) {
      outputs[name] = await test.call(name, {});
      expectNoSecret(JSON.stringify(outputs[name]), secrets);
    }
    const settings = outputs['app.settings.get']!;
    expect(settings.isError).toBe(false);
    expect(settings.structured).toMatchObject({
      settings: { gateway: { token: '••••••••' }, openagent: { headers: { Authorization: '••••••••' } }, mcpClient: { servers: [{ env: { VAULT_API_KEY: '••••••••' } }] } },
      secrets: { mcpToken: true, adminToken: true, gatewayToken: true, gatewayTokenFromEnv: false, openagentHeaders: true, gatewayNodeIdentity: false },
    });
    expect(outputs['app.connection.gateways']!.structured).toMatchObject({ gateways: [{ source: 'settings', url: 'ws://127.0.0.1:9', enabled: false, active: false, hasToken: true, hasNodeIdentity: false }] });
    expect(outputs['app.connection.status']!.structured).toMatchObject({ gateway: { state: 'disabled' }, mcp: { state: 'listening' }, pendingApprovals: 0 });
    expect(outputs['app.pairing.list']!.structured).toMatchObject({ connection: 'disabled', nodeId: null });
    expect(outputs['app.approvals.list']!.structured).toEqual({ pending: [], allowed: [] });
    expect(outputs['app.servers.list']!.structured).toMatchObject({ servers: [{ name: 'vault', enabled: true, config: { env: { VAULT_API_KEY: '••••••••' } } }] });
    expect(outputs['app.plugins.list']!.structured).toEqual({ plugins: [] });
    // The dashboard's URL only: no sign-in code, no login path.
    const dashboard = outputs['app.dashboard.url']!;
    expect(dashboard.isError).toBe(false);
    expect(dashboard.structured).toEqual({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/), state: 'listening' });
    expect(dashboard.text).not.toMatch(/login|code=|#/i);
    expect(outputs['app.connection.reconnect']).toMatchObject({ isError: true, text: expect.stringContaining('No gateway node runs on this host') });
    expect(outputs['app.pairing.reject']).toMatchObject({ isError: true, text: expect.stringContaining('no node identity') });
  });

  it('app.settings.set waits for the approval that shows the diff, then writes only the change', async () => {
    await using test = await startTestHost({ settings: SECRET_SETTINGS, host: { builtinPlugins: false } });
    const secrets = [...secretsOf(test.home), NEW_TOKEN];
    const before = await settingsFile(test.home);

    // Bad input: a clear error naming the field, nobody asked, nothing written.
    const bad = await test.call('app.settings.set', { patch: { mcp: { port: 'eighty' } } });
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining('mcp.port') });
    expect(test.asked).toEqual([]);
    expect(await settingsFile(test.home)).toEqual(before);

    const call = test.call('app.settings.set', { patch: { mcp: { maxConcurrency: 7 } } });
    const approval = await eventually(() => test.asked[0], slowPoll('the settings approval'));
    expect(approval.command).toBe('app.settings.set');
    expect(approval.summary).toBe('change settings: mcp.maxConcurrency');
    expect(approval.diff).toContain('-    "maxConcurrency": 16');
    expect(approval.diff).toContain('+    "maxConcurrency": 7');
    // Read-only: the pending request is listed (without the hash an answer is bound to); nothing written yet.
    const listed = await test.call('app.approvals.list', {});
    expect(listed.structured).toMatchObject({ pending: [{ id: approval.id, command: 'app.settings.set', transport: 'mcp-http' }] });
    expect(JSON.stringify(listed.structured)).not.toContain(approval.argsHash!);
    expect(await settingsFile(test.home)).toEqual(before);
    // Someone else edits another setting while the approval is open: that edit is kept.
    await test.host.settings.update((current) => ({ ...current, approvals: { ...current.approvals, holdMs: 1234 } }));
    test.host.approvals.resolve(approval.id, 'allow-once');
    const done = await call;
    expect(done.isError).toBe(false);
    expect(done.structured).toMatchObject({ changed: ['mcp.maxConcurrency'], restartNeeded: ['mcp.maxConcurrency'] });
    const after = await settingsFile(test.home);
    expect(after).toEqual({ ...before, mcp: { ...before.mcp, maxConcurrency: 7 }, approvals: { ...before.approvals, holdMs: 1234 } });
    expect(after.gateway.token).toBe(GATEWAY_TOKEN);

    // A secret change shows as a changed path, its value never; denied, nothing written.
    const secret = test.call('app.settings.set', { patch: { gateway: { token: NEW_TOKEN } } });
    const asked = await eventually(() => test.asked[1], slowPoll('the token approval'));
    expect(asked.summary).toBe('change settings: gateway.token');
    expectNoSecret(JSON.stringify(asked), secrets);
    test.host.approvals.resolve(asked.id, 'deny');
    const denied = await secret;
    expect(denied).toMatchObject({ isError: true, text: expect.stringContaining('denied') });
    expect((await settingsFile(test.home)).gateway.token).toBe(GATEWAY_TOKEN);
    expectNoSecret(JSON.stringify([bad, listed, done, denied]), secrets);
  });

  it('app.pairing.approve goes through the approval queue before it contacts the gateway', async () => {
    await using test = await startTestHost({ settings: SECRET_SETTINGS, host: { builtinPlugins: false } });
    test.answerWith('allow-once');
    const result = await test.call('app.pairing.approve', {});
    expect(test.asked.map((approval) => [approval.command, approval.summary])).toEqual([['app.pairing.approve', "approve this machine's gateway node pairing on ws://127.0.0.1:9"]]);
    // No node identity here: it never connected, so there is nothing to approve on the gateway.
    expect(result).toMatchObject({ isError: true, text: expect.stringContaining('no node identity') });
    expectNoSecret(JSON.stringify(result), secretsOf(test.home));
  });
});

describe('app.connection.* with a gateway node that cannot reach its gateway', () => {
  it('reports it, reconnects it, and names why pairing cannot reach the gateway', async () => {
    const settings = { ...SECRET_SETTINGS, gateway: { ...SECRET_SETTINGS.gateway, enabled: true } };
    await using test = await startTestHost({ settings, host: { builtinPlugins: false } });
    const secrets = secretsOf(test.home);
    const reconnect = await test.call('app.connection.reconnect', {});
    expect(reconnect.isError).toBe(false);
    expect(reconnect.structured).toMatchObject({ reconnecting: true, gateway: { enabled: true, url: 'ws://127.0.0.1:9' } });
    expect(test.logs.some((line) => line.includes('gateway node: reconnecting to ws://127.0.0.1:9'))).toBe(true);
    const gateways = await test.call('app.connection.gateways', {});
    expect(gateways.structured).toMatchObject({ gateways: [{ source: 'settings', url: 'ws://127.0.0.1:9', enabled: true, active: true, hasToken: true, hasNodeIdentity: true }] });
    const pairing = await test.call('app.pairing.list', {});
    expect(pairing.structured).toMatchObject({ gateway: 'ws://127.0.0.1:9', nodeId: expect.any(String) });
    const reject = await test.call('app.pairing.reject', {});
    expect(reject).toMatchObject({ isError: true, text: expect.stringContaining('cannot connect to ws://127.0.0.1:9') });
    expectNoSecret(JSON.stringify([reconnect, gateways, pairing, reject]), secrets);
    // The operator handshake to a closed port can wait for its own 15 s deadline.
  }, 60_000);
});

describe('app.* over stdio (real SDK v2 client, capnode mcp)', () => {
  it('lists and answers the app tools; app.settings.set returns approval_pending and the retry writes once allowed', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ ...SECRET_SETTINGS, approvals: { holdMs: 0, notify: false } }), { mode: 0o600 });
    const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: dir.home }, stderr: 'pipe' });
    const client = new Client({ name: 'app-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(APP_TOOLS));
      const secrets = [GATEWAY_TOKEN, SERVER_SECRET, 'oa-header-0123456789abcdefSECRET'];
      for (const name of APP_TOOLS.filter((tool) => tool !== 'app.settings.set' && tool !== 'app.pairing.approve')) {
        const result = await client.callTool({ name, arguments: {} });
        expectNoSecret(JSON.stringify(result), secrets);
      }
      const settings = await client.callTool({ name: 'app.settings.get', arguments: {} });
      expect(settings.structuredContent).toMatchObject({ settings: { gateway: { token: '••••••••' } }, secrets: { gatewayToken: true } });
      const status = await client.callTool({ name: 'app.connection.status', arguments: {} });
      expect(status.structuredContent).toMatchObject({ stdio: { state: 'serving' } });

      const params = { name: 'app.settings.set', arguments: { patch: { approvals: { progressIntervalMs: 4000 } } } };
      const first = await client.callTool(params);
      expect(first.isError).toBe(true);
      expect(JSON.stringify(first)).toContain('approval_pending');
      expect(JSON.stringify(first.content)).toContain('capnode approvals allow');
      expect((await settingsFile(dir.home)).approvals.progressIntervalMs).toBeUndefined();
      const approval = await eventually(async () => {
        const listed = JSON.parse((await runCli(['approvals', 'list', '--json'], dir.home)).stdout) as { approvals: { id: string; command: string; diff?: string }[] };
        return listed.approvals[0];
      }, slowPoll('the settings approval from the stdio host'));
      expect(approval).toMatchObject({ command: 'app.settings.set', diff: expect.stringContaining('+    "progressIntervalMs": 4000') });
      const allowed = await runCli(['approvals', 'allow', approval.id], dir.home);
      expect(allowed.code, allowed.stderr).toBe(0);
      const retry = await client.callTool(params);
      expect(retry.isError ?? false).toBe(false);
      expect(retry.structuredContent).toMatchObject({ changed: ['approvals.progressIntervalMs'] });
      const after = await settingsFile(dir.home);
      expect(after.approvals.progressIntervalMs).toBe(4000);
      expect(after.gateway.token).toBe(GATEWAY_TOKEN);
    } finally {
      await client.close();
    }
  });
});
