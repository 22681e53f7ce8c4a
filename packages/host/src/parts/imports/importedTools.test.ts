import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { everythingServer, hangingServer } from '../../../../../tests/support/mcpServers.js';
import { eventually, isAlive } from '../../../../../tests/support/poll.js';
import { createHost, type HostLogLevel } from '../../host/host.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-host-imports-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function writeSettings(mcpClient: Record<string, unknown>): void {
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ mcpClient }));
}

async function rpc(url: string, method: string, params: Record<string, unknown> = {}) {
  const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: Record<string, unknown> }).result;
}

describe('host re-export of imported MCP tools', () => {
  it('is off by default: nothing is spawned and the status says so', async () => {
    writeSettings({ servers: [everythingServer()] });
    await using host = createHost({ home, port: 0, builtins: false });
    const status = await host.start();
    await host.importsReady();
    expect(status.mcpClient).toMatchObject({ reexport: false, state: 'off', servers: [], toolCount: 0 });
    expect(host.registry.commands().some((command) => command.name.includes('__'))).toBe(false);
  });

  it('serves <server>__<tool> beside built-ins through the same pipeline, and close() ends the server', async () => {
    writeSettings({
      reexport: true,
      servers: [everythingServer(), { name: 'broken', command: process.execPath, args: ['-e', 'process.exit(3)'] }],
      risk_profiles: { capnode: { auto_approve: ['everything__echo'] } },
    });
    const logs: string[] = [];
    const host = createHost({ home, port: 0, onLog: (level: HostLogLevel, message) => logs.push(`${level}: ${message}`) });
    const status = await host.start();
    const url = status.mcp.url!;
    await host.importsReady();

    const imports = host.status().mcpClient;
    expect(imports).toMatchObject({ reexport: true, state: 'ready', agent: 'capnode' });
    const everything = imports.servers.find((server) => server.server === 'everything')!;
    expect(everything).toMatchObject({ state: 'connected', transport: 'stdio' });
    expect(everything.toolCount).toBeGreaterThan(5);
    expect(everything.connectMs).toBeGreaterThan(0);
    const broken = imports.servers.find((server) => server.server === 'broken')!;
    expect(broken.state).toBe('failed');
    expect(broken.error).toContain('exited (code 3)');
    expect(logs.join('\n')).toMatch(/imported MCP tools ready: \d+ tools from 1 of 2 servers/);

    const listed = (await rpc(url, 'tools/list')).tools as { name: string }[];
    const names = listed.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['device.info', 'app.status', 'everything__echo', 'everything__get-sum']));

    // Auto-approved by the host agent's risk profile.
    const echoed = await rpc(url, 'tools/call', { name: 'everything__echo', arguments: { message: 'through the host' } });
    expect(echoed.isError ?? false).toBe(false);
    expect(JSON.stringify(echoed.content)).toContain('Echo: through the host');

    // Not auto-approved: asked through the host's approval broker, where a denial refuses it.
    const sum = rpc(url, 'tools/call', { name: 'everything__get-sum', arguments: { a: 1, b: 2 } });
    const pending = await eventually(async () => host.approvals.list()[0], { what: 'an approval request', timeoutMs: 20_000 });
    expect(pending.command).toBe('everything__get-sum');
    expect(pending.summary).toContain("tool 'get-sum' of MCP server 'everything'");
    expect(logs.join('\n')).toContain(`capnode approvals allow ${pending.id}`);
    host.approvals.resolve(pending.id, 'deny');
    const denied = await sum;
    expect(denied.isError).toBe(true);
    expect(JSON.stringify(denied.content)).toMatch(/not approved/);

    // allow-always answers once and saves the tool in auto_approve.
    const again = rpc(url, 'tools/call', { name: 'everything__get-sum', arguments: { a: 1, b: 2 } });
    const second = await eventually(async () => host.approvals.list()[0], { what: 'a second approval request', timeoutMs: 20_000 });
    host.approvals.resolve(second.id, 'allow-always');
    expect(JSON.stringify((await again).content)).toContain('3');
    const saved = JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'));
    expect(saved.mcpClient.risk_profiles.capnode.auto_approve).toEqual(['everything__echo', 'everything__get-sum']);
    const third = await rpc(url, 'tools/call', { name: 'everything__get-sum', arguments: { a: 2, b: 2 } });
    expect(JSON.stringify(third.content)).toContain('4');

    const audit = readFileSync(join(home, 'audit.log'), 'utf8');
    expect(audit).toContain('"command":"everything__echo"');
    expect(audit).toContain('"outcome":"denied"');

    const appStatus = await rpc(url, 'tools/call', { name: 'app.status', arguments: {} });
    expect(appStatus.structuredContent).toMatchObject({ mcpClient: { reexport: true, state: 'ready' } });

    await host.close();
    expect(host.status().mcpClient.state).toBe('closed');
    expect(host.registry.commands().some((command) => command.name.includes('__'))).toBe(false);
  });

  it('starts at once beside a server that never answers, reports it as connecting, and close() kills it', async () => {
    const pidFile = join(home, 'hang.pid');
    writeSettings({ reexport: true, servers: [hangingServer('hang', pidFile, 300)] });
    const host = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const status = await host.start();
    expect(status.mcp.state).toBe('listening');
    expect(status.mcpClient.state).toBe('starting');
    expect(status.mcpClient.servers).toEqual([expect.objectContaining({ server: 'hang', state: 'connecting' })]);
    const pid = await eventually(async () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) || undefined : undefined), { what: 'the hanging server to start', timeoutMs: 20_000 });
    expect(isAlive(pid)).toBe(true);

    await host.close();
    expect(host.status().mcpClient.state).toBe('closed');
    await eventually(async () => (isAlive(pid) ? undefined : true), { what: 'the hanging server to be gone', timeoutMs: 20_000 });
  });
});
