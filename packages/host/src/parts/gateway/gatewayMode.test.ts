import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATEWAY_NODE_IDENTITY_FILE as BRIDGE_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE as BRIDGE_OPERATOR_IDENTITY_FILE } from '@capnode/gateway-bridge/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isHostError } from '../../errors.js';
import { GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE, resolveGatewayConfig } from './gatewayMode.js';
import { createHost, type HostStatus } from '../../host/host.js';
import { defaultSettings } from '../../config/settings.js';
import { eventually } from '../../../../../tests/support/poll.js';

const SECRET = 'gateway-secret-token-never-shown-0123456789';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-gateway-mode-'));
});
// A record still reaching the disk after close's flush deadline (a loaded CI machine) may land during the rm.
afterEach(() => rmSync(home, { recursive: true, force: true, maxRetries: 5 }));

/** A loopback port nothing listens on: every connect attempt is refused. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function writeSettings(value: unknown): void {
  writeFileSync(join(home, 'settings.json'), JSON.stringify(value));
}

function quiet() {
  const logs: string[] = [];
  return { logs, onLog: (level: string, message: string) => void logs.push(`${level}: ${message}`) };
}

describe('the settings matrix: node mode × MCP server', () => {
  it('MCP on, node off: the listener runs, node mode reports disabled', async () => {
    await using host = createHost({ home, port: 0, builtins: false, ...quiet() });
    const status = await host.start();
    expect(status.mcp.state).toBe('listening');
    expect(status.node).toMatchObject({ enabled: false, state: 'disabled' });
    expect(status.node.nodeId).toBeUndefined();
    expect(existsSync(join(home, GATEWAY_NODE_IDENTITY_FILE))).toBe(false);
  });

  it('MCP on, node on (unreachable gateway): the listener is listening, the node is not connected and says why', async () => {
    const url = `ws://127.0.0.1:${await deadPort()}`;
    const { logs, onLog } = quiet();
    await using host = createHost({ home, port: 0, builtins: false, gateway: { url, token: SECRET }, onLog });
    const status = await host.start();
    expect(status.mcp.state).toBe('listening');
    expect(['connecting', 'waiting']).toContain(status.node.state);
    expect(status.node).toMatchObject({ enabled: true, url, identityPath: join(home, GATEWAY_NODE_IDENTITY_FILE) });
    const waiting = await eventually(() => (host.status().node.lastError ? host.status() : undefined), { what: 'a connect error', timeoutMs: 20_000 });
    expect(['connecting', 'waiting']).toContain(waiting.node.state);
    expect(waiting.node.lastError?.message).toMatch(/.+/);
    expect(waiting.node.detail).toContain(url);
    expect(statSync(join(home, GATEWAY_NODE_IDENTITY_FILE)).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(waiting)).not.toContain(SECRET);
    expect(logs.join('\n')).not.toContain(SECRET);

    // app.status over the working MCP listener reports the listener and the node separately.
    const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    const response = await fetch(status.mcp.url!, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'app.status', arguments: {} } }),
    });
    const reported = ((await response.json()) as { result: { structuredContent: HostStatus } }).result.structuredContent;
    expect(reported.mcp.state).toBe('listening');
    expect(reported.node.state).not.toBe('connected');
    expect(['connecting', 'waiting']).toContain(reported.node.state);
    expect(JSON.stringify(reported)).not.toContain(SECRET);
  });

  it('MCP off, node on: only the node runs, with an admin-only listener for approvals; closed with the host', async () => {
    const url = `ws://127.0.0.1:${await deadPort()}`;
    writeSettings({ mcp: { enabled: false }, gateway: { enabled: true, url, token: SECRET } });
    const host = createHost({ home, builtins: false, ...quiet() });
    const status = await host.start();
    expect(status.mcp.state).toBe('disabled');
    expect(status.mcp.url).toBeUndefined();
    expect(['connecting', 'waiting']).toContain(status.node.state);
    expect(existsSync(join(home, 'host.json'))).toBe(false);
    const runFile = join(home, 'run', `node-${process.pid}.json`);
    const runtime = JSON.parse(readFileSync(runFile, 'utf8')) as { kind: string; adminUrl: string; url?: string };
    expect(runtime).toMatchObject({ kind: 'node', adminUrl: status.admin!.url });
    expect(runtime.url).toBeUndefined();

    const adminToken = readFileSync(join(home, 'admin-token'), 'utf8').trim();
    const answer = await fetch(new URL('status', runtime.adminUrl), { headers: { authorization: `Bearer ${adminToken}` } });
    const remote = (await answer.json()) as HostStatus;
    expect(remote.mcp.state).toBe('disabled');
    expect(remote.node.url).toBe(url);
    expect(JSON.stringify(remote)).not.toContain(SECRET);

    await host.close();
    expect(host.status().node.state).toBe('closed');
    expect(existsSync(runFile)).toBe(false);
  });

  it('MCP off, node off: nothing starts and the status says so', async () => {
    writeSettings({ mcp: { enabled: false } });
    await using host = createHost({ home, builtins: false, ...quiet() });
    const status = await host.start();
    expect(status.mcp.state).toBe('disabled');
    expect(status.node).toMatchObject({ enabled: false, state: 'disabled' });
    expect(status.admin).toBeUndefined();
    expect(existsSync(join(home, 'run', `node-${process.pid}.json`))).toBe(false);
  });

  it('gateway.enabled without a URL is a clear settings error', async () => {
    writeSettings({ gateway: { enabled: true } });
    await using host = createHost({ home, port: 0, builtins: false, ...quiet() });
    const error = await host.start().catch((caught: unknown) => caught);
    expect(isHostError(error) && error.code).toBe('invalid_settings');
    expect((error as Error).message).toContain('gateway.url');
  });

  it('rejects a non-WebSocket gateway URL in settings.json', () => {
    writeSettings({ gateway: { enabled: true, url: 'http://127.0.0.1:1' } });
    expect(() => createHost({ home, builtins: false })).toThrow(/gateway\.url: must be a ws:\/\/ or wss:\/\/ URL/);
  });
});

describe('resolveGatewayConfig', () => {
  const settings = { ...defaultSettings(), gateway: { enabled: true, url: 'ws://gw.example:18789', token: 'from-settings' } };

  it('takes the token from the run, then CAPNODE_GATEWAY_TOKEN, then settings.json', () => {
    expect(resolveGatewayConfig(settings, { token: 'flag' }, { CAPNODE_GATEWAY_TOKEN: 'env' })).toEqual({ url: 'ws://gw.example:18789', token: 'flag' });
    expect(resolveGatewayConfig(settings, undefined, { CAPNODE_GATEWAY_TOKEN: 'env' })).toEqual({ url: 'ws://gw.example:18789', token: 'env' });
    expect(resolveGatewayConfig(settings, undefined, {})).toEqual({ url: 'ws://gw.example:18789', token: 'from-settings' });
  });

  it('is off without gateway.enabled or a run URL, and the run URL wins', () => {
    expect(resolveGatewayConfig(defaultSettings(), undefined, {})).toBeUndefined();
    expect(resolveGatewayConfig(defaultSettings(), { url: 'wss://other:1' }, {})).toEqual({ url: 'wss://other:1' });
    expect(() => resolveGatewayConfig(defaultSettings(), { url: 'http://x' }, {})).toThrow(/ws:\/\/ or wss:\/\//);
  });

  it('uses the same identity file names as the gateway bridge', () => {
    expect(GATEWAY_NODE_IDENTITY_FILE).toBe(BRIDGE_NODE_IDENTITY_FILE);
    expect(OPERATOR_IDENTITY_FILE).toBe(BRIDGE_OPERATOR_IDENTITY_FILE);
  });
});
