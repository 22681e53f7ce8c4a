import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineCapability, defineCommand, type InvocationHook } from '@capnode/capabilities';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHost } from '../../host/host.js';
import { MAX_LOG_LINE } from '../../context/hostLog.js';
import { hostPaths } from '../../config/paths.js';
import { createHostPipeline, describeToolArgs } from './pipeline.js';
import { createSettingsStore } from '../../config/settings.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-pipeline-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function firstPending(list: () => readonly { id: string }[]): Promise<{ id: string }> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const [first] = list();
    if (first) return first;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no pending approval');
}

describe('createHostPipeline', () => {
  it('composes exec approvals and the audit log into one invoker (the host uses the same)', async () => {
    const paths = hostPaths(home);
    const settings = createSettingsStore(paths.settings);
    const logs: string[] = [];
    const pipeline = createHostPipeline({ paths, settings, log: (level, message) => logs.push(`${level}: ${message}`) });
    const call = pipeline.invoker.invoke({ command: 'system.run', args: { command: [process.execPath, '-e', '1'] }, transport: 'cli', caller: 'capnode-cli' });
    const pending = await firstPending(() => pipeline.approvals.list());
    expect(pipeline.approvals.resolve(pending.id, 'deny')).toBe(true);
    expect((await call).result).toMatchObject({ ok: false, error: { code: 'denied' } });
    await pipeline.close();
    const record = JSON.parse(readFileSync(paths.auditLog, 'utf8').trim()) as Record<string, unknown>;
    expect(record).toMatchObject({ command: 'system.run', transport: 'cli', caller: 'capnode-cli', outcome: 'denied' });

    await using host = createHost({ home, builtins: false, onLog: () => {} });
    expect(host.registry.commands().map((command) => command.name).filter((name) => !name.startsWith('app.'))).toEqual([]);
    expect(host.registry.resolve('app.status')?.definition.localOnly).toBe(true);
  });

  it('shows imported tool arguments scrubbed, then cut', () => {
    const text = describeToolArgs({ padding: 'p'.repeat(270), auth: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123' });
    expect(text.length).toBeLessThanOrEqual(1100);
    expect(text).not.toMatch(/abcdefgh/);
    expect(describeToolArgs({ items: Array.from({ length: 2000 }, () => 'x'.repeat(300)) }).length).toBeLessThanOrEqual(1100);
  });

  it('a padded argument cannot hide the end of another from the person asked', () => {
    const text = describeToolArgs({ padding: 'p'.repeat(5000), path: `/tmp/notes.txt${'/'.repeat(500)}../../home/user/.ssh/id_ed25519` });
    expect(text).toContain('(5000 characters)');
    expect(text).toContain('../../home/user/.ssh/id_ed25519');
  });
});

describe('host log', () => {
  const crash = (message: string) =>
    defineCapability({
      category: 'test',
      commands: [
        defineCommand({
          name: 'test.crash',
          description: 'throws a plain error',
          execute: () => {
            throw new Error(message);
          },
        }),
      ],
    });

  it('scrubs the gateway token and imported servers\' secrets from every line before capping it', async () => {
    const gatewayToken = 'gw-shared-token-0123456789abcdef';
    const serverSecret = 'server-env-secret-9876543210';
    writeFileSync(
      join(home, 'settings.json'),
      JSON.stringify({ gateway: { token: gatewayToken }, mcpClient: { servers: [{ name: 'srv', command: 'true', env: { API_KEY: serverSecret } }] } }),
      { mode: 0o600 },
    );
    // The secret straddles the cap of a log line: cutting first would leave its first half visible.
    const padding = 'x'.repeat(MAX_LOG_LINE - 60);
    const logs: string[] = [];
    await using host = createHost({ home, builtins: false, capabilities: [crash(`${padding} ${gatewayToken} and ${serverSecret}`)], onLog: (_level, message) => logs.push(message) });
    await host.invoker.invoke({ command: 'test.crash', transport: 'cli' });
    const line = logs.find((entry) => entry.includes('test.crash failed internally'));
    expect(line).toBeDefined();
    expect(line!.length).toBeLessThanOrEqual(MAX_LOG_LINE);
    for (const secret of [gatewayToken, serverSecret]) {
      for (let length = 6; length <= secret.length; length += 1) expect(line).not.toContain(secret.slice(0, length));
    }
  });

  it('scrubs the MCP and admin tokens once loaded', async () => {
    const logs: string[] = [];
    const host = createHost({ home, port: 0, builtins: false, onLog: (_level, message) => logs.push(message) });
    await host.start();
    const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    host.registry.register(crash(`leaked ${token}`));
    await host.invoker.invoke({ command: 'test.crash', transport: 'cli' });
    await host.close();
    expect(logs.join('\n')).toContain('test.crash failed internally');
    expect(logs.join('\n')).not.toContain(token);
  });

  it('runs its hook slots in the documented order, audit last, for real calls from the host: built-in and imported', async () => {
    const fixture = fileURLToPath(new URL('../../../../../tests/mcp-client/fixtures/stdioServer.mjs', import.meta.url));
    writeFileSync(
      join(home, 'settings.json'),
      JSON.stringify({ mcpClient: { reexport: true, servers: [{ name: 'fx', command: process.execPath, args: [fixture, 'ok'] }], risk_profiles: { capnode: { autonomy: 'full' } } } }),
      { mode: 0o600 },
    );
    const probe = defineCapability({ category: 'probe', commands: [defineCommand({ name: 'probe.echo', description: 'echo', execute: () => 'probed' })] });
    await using host = createHost({ home, port: 0, builtins: false, builtinPlugins: false, capabilities: [probe], onLog: () => {} });
    const order = ['availability', 'consent', 'exec-approval', 'mcp-tools', 'audit'];
    expect(host.invoker.hooks.map((hook) => hook.name)).toEqual(order);
    // A probe in each slot: it records, then runs the slot's own hook.
    const seen: string[] = [];
    for (const hook of host.invoker.hooks as InvocationHook[]) {
      const { beforeInvoke, afterInvoke } = hook;
      Object.assign(hook, {
        beforeInvoke: (invocation: Parameters<NonNullable<InvocationHook['beforeInvoke']>>[0]) => {
          seen.push(`${hook.name}:before:${invocation.command.name}`);
          return beforeInvoke?.call(hook, invocation);
        },
        afterInvoke: (...args: Parameters<NonNullable<InvocationHook['afterInvoke']>>) => {
          seen.push(`${hook.name}:after:${args[1].command}`);
          afterInvoke?.call(hook, ...args);
        },
      });
    }
    const status = await host.start();
    await host.importsReady();
    const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    const call = async (name: string) => {
      const response = await fetch(status.mcp.url!, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { text: 'hi' } } }),
      });
      return response.text();
    };
    for (const name of ['probe.echo', 'fx__echo']) {
      seen.length = 0;
      expect(await call(name)).toMatch(name === 'probe.echo' ? /probed/ : /"text":"hi"/);
      expect(seen).toEqual([...order.map((slot) => `${slot}:before:${name}`), ...order.map((slot) => `${slot}:after:${name}`)]);
    }
    await host.close();
    const audited = readFileSync(hostPaths(home).auditLog, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { command: string }).command);
    expect(audited).toEqual(['probe.echo', 'fx__echo']);
  });
});
