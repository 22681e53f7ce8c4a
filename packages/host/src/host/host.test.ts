import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineCapability, defineCommand } from '@capnode/capabilities';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isHostError } from '../errors.js';
import { createHost, type HostLogLevel } from './host.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-host-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function rpc(url: string, token: string, method: string, params: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: response.status, body: response.status === 200 ? ((await response.json()) as { result?: Record<string, unknown> }) : undefined };
}

const slow = defineCapability({
  category: 'test',
  commands: [
    defineCommand({
      name: 'test.wait',
      description: 'waits',
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve('done'), 1500);
          ctx.signal.addEventListener('abort', () => clearTimeout(timer));
        }),
    }),
  ],
});

describe('createHost', () => {
  it('starts from real state, serves MCP and admin routes, and cleans up on close', async () => {
    const logs: string[] = [];
    const host = createHost({ home, port: 0, capabilities: [slow], onLog: (level: HostLogLevel, message) => logs.push(`${level}: ${message}`) });
    expect(host.status().mcp.state).toBe('stopped');
    const [status, again] = await Promise.all([host.start(), host.start()]);
    expect(status.mcp.state).toBe('listening');
    expect(again.mcp.url).toBe(status.mcp.url);
    const url = status.mcp.url!;
    const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    const adminToken = readFileSync(join(home, 'admin-token'), 'utf8').trim();
    expect(token).not.toBe(adminToken);
    expect(JSON.parse(readFileSync(join(home, 'host.json'), 'utf8'))).toMatchObject({ pid: process.pid, kind: 'http', url });

    const listed = await rpc(url, token, 'tools/list');
    const names = (listed.body!.result!.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['device.info', 'system.run', 'app.status', 'test.wait']));
    expect(host.registry.commands({ excludeLocalOnly: true }).map((command) => command.name)).not.toContain('app.status');

    const appStatus = await rpc(url, token, 'tools/call', { name: 'app.status', arguments: {} });
    expect(appStatus.body!.result!.structuredContent).toMatchObject({
      mcp: { state: 'listening', url, tokenPath: join(home, 'mcp-token') },
      execApprovals: { mode: 'ask', pending: 0 },
      node: { enabled: false, state: 'disabled' },
    });
    expect(JSON.stringify(appStatus.body)).not.toContain(token);

    // Admin routes take only the admin token.
    const approvalsUrl = new URL('/_capnode/approvals', url);
    expect((await fetch(approvalsUrl, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await fetch(approvalsUrl, { headers: { authorization: `Bearer ${adminToken}` } })).status).toBe(200);

    // Rotation applies at once and leaves an in-flight call alone.
    const inFlight = rpc(url, token, 'tools/call', { name: 'test.wait', arguments: {} });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await host.rotateToken();
    const rotated = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    expect(rotated).not.toBe(token);
    expect((await rpc(url, token, 'tools/list')).status).toBe(401);
    expect((await rpc(url, rotated, 'tools/list')).status).toBe(200);
    const finished = await inFlight;
    expect(finished.body!.result!.isError ?? false).toBe(false);

    await host.close();
    await host.close();
    expect(host.status().mcp.state).toBe('stopped');
    expect(existsSync(join(home, 'host.json'))).toBe(false);
    await expect(host.start()).rejects.toSatisfy((error: unknown) => isHostError(error) && error.code === 'closed');
  });

  it('reports a listener that could not start, with the reason', async () => {
    await using first = createHost({ home, port: 0, builtins: false });
    const port = new URL((await first.start()).mcp.url!).port;
    const otherHome = mkdtempSync(join(tmpdir(), 'capnode-host-'));
    try {
      await using second = createHost({ home: otherHome, port: Number(port), builtins: false });
      await expect(second.start()).rejects.toSatisfy((error: unknown) => isHostError(error) && error.code === 'listen_failed');
      const status = second.status();
      expect(status.mcp.state).toBe('error');
      expect(status.mcp.error).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(status.mcp.url).toBeUndefined();
    } finally {
      rmSync(otherHome, { recursive: true, force: true });
    }
  });

  it('honours disabled MCP (node mode: see gatewayMode.test.ts)', async () => {
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ mcp: { enabled: false } }));
    await using host = createHost({ home, builtins: false });
    const status = await host.start();
    expect(status.mcp.state).toBe('disabled');
    expect(status.node).toMatchObject({ enabled: false, state: 'disabled' });
    expect(existsSync(join(home, 'host.json'))).toBe(false);
  });

  it('rewrites a settings.json with the old "node" section as "gateway" and warns once', async () => {
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ mcp: { enabled: false }, node: { url: 'ws://127.0.0.1:9', token: 'gateway-secret-1' } }), { mode: 0o600 });
    const warnings: string[] = [];
    const host = createHost({ home, onLog: (level: HostLogLevel, message) => level === 'warning' && warnings.push(message) });
    await host.close();
    expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'))).toMatchObject({ gateway: { url: 'ws://127.0.0.1:9', token: 'gateway-secret-1' } });
    expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')).node).toBeUndefined();
    expect(warnings.filter((message) => message.includes('"node"'))).toEqual([expect.stringContaining('is now called "gateway"')]);
    expect(host.settings.get().gateway.url).toBe('ws://127.0.0.1:9');
  });

  it('refuses a bad settings file before doing anything', () => {
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ execApprovals: { allowlist: ['*'] } }));
    expect(() => createHost({ home })).toThrow(/execApprovals\.allowlist\.0/);
  });

  it('logs how to answer a pending approval', async () => {
    const logs: string[] = [];
    await using host = createHost({ home, port: 0, onLog: (level, message) => logs.push(`${level}: ${message}`) });
    // A caller that asked for progress waits for the answer.
    const call = host.invoker.invoke(
      { command: 'system.run', args: { command: [process.execPath, '-e', '1'] }, transport: 'mcp-http', caller: 'tester\r\u001b[2Kroot' },
      { onProgress: () => {} },
    );
    const pending = await (async () => {
      for (let i = 0; i < 100; i++) {
        const [first] = host.approvals.list();
        if (first) return first;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('no pending approval');
    })();
    expect(logs.join('\n')).toContain(`capnode approvals allow ${pending.id}`);
    const logged = logs.join('\n');
    expect(logged).toContain('caller: tester\\r\\u{001b}[2Kroot (self-reported)');
    expect(logged).not.toContain('\u001b');
    expect(logged).toContain(`program: ${process.execPath}`);
    expect(logged).toContain('transport: mcp-http');
    expect(logged).toMatch(/hash: [0-9a-f]{12}\n/);
    expect(host.approvals.resolve(pending.id, 'deny')).toBe(true);
    const outcome = await call;
    expect(outcome.result.ok).toBe(false);
    await host.close();
    expect(readFileSync(join(home, 'audit.log'), 'utf8')).toContain('"outcome":"denied"');
  });

  it.skipIf(process.platform === 'win32' || process.platform === 'darwin')(
    'shows a desktop notification for each new pending approval, escaped and truthful (notify-send stub on PATH)',
    async () => {
      const bin = join(home, 'bin');
      mkdirSync(bin);
      const record = join(home, 'notify-argv');
      // Records its argv NUL-separated, each call ended by \u0001.
      writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done >> "${record}"\nprintf '\\001' >> "${record}"\n`);
      chmodSync(join(bin, 'notify-send'), 0o755);
      const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
      await using host = createHost({ home: join(home, 'cfg'), env, port: 0, onLog: () => {} });
      const call = host.invoker.invoke(
        { command: 'system.run', args: { command: ['/bin/echo', 'hi\u202egnp.exe'], cwd: home }, transport: 'mcp-stdio', caller: 'agent\u200b' },
        { onProgress: () => {} },
      );
      let argv: string[] = [];
      for (let i = 0; i < 200 && argv.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        if (existsSync(record) && readFileSync(record, 'utf8').includes('\u0001')) argv = readFileSync(record, 'utf8').split('\u0001')[0]!.split('\0').filter(Boolean);
      }
      const [pending] = host.approvals.list();
      expect(argv.slice(0, 5)).toEqual(['--urgency', 'critical', '--app-name', 'capnode', '--']);
      const [title, body] = argv.slice(5);
      expect(title).toBe('capnode: approval needed (system.run)');
      expect(body).toContain('program: /bin/echo');
      expect(body).toContain('argv: ["/bin/echo","hi\\u{202e}gnp.exe"]');
      expect(body).toContain('hi\\u{202e}gnp.exe');
      expect(body).toContain(`cwd: ${home}`);
      expect(body).toContain('caller: agent\\u{200b} (self-reported)');
      expect(body).toContain('transport: mcp-stdio');
      expect(body).toContain(`capnode approvals allow ${pending!.id}`);
      expect(body).not.toMatch(/[\u202e\u200b]/);
      host.approvals.resolve(pending!.id, 'deny');
      expect((await call).result.ok).toBe(false);
      // Off in settings: no notification.
      await host.settings.update((settings) => ({ ...settings, approvals: { ...settings.approvals, notify: false } }));
      const second = host.invoker.invoke({ command: 'system.run', args: { command: ['/bin/echo', 'again'] }, transport: 'cli' });
      for (let i = 0; i < 100 && host.approvals.list().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(readFileSync(record, 'utf8').split('\u0001').filter(Boolean)).toHaveLength(1);
      host.approvals.resolve(host.approvals.list()[0]!.id, 'deny');
      await second;
    },
  );

  it('ends open approval event streams when it closes, so the listener drains', async () => {
    const host = createHost({ home, port: 0, onLog: () => {} });
    const { mcp } = await host.start();
    const adminToken = readFileSync(host.paths.adminToken, 'utf8').trim();
    const response = await fetch(new URL('/_capnode/approvals/events', mcp.url), { headers: { authorization: `Bearer ${adminToken}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: snapshot');
    const started = Date.now();
    await host.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
  });
});
