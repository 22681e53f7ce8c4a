import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { eventually } from '../support/poll.js';

const fixture = fileURLToPath(new URL('./fixtures/stdioServer.mjs', import.meta.url));
const serverParams = { command: process.execPath, args: [fixture], stderr: 'pipe' as const };

interface TestClient {
  readonly protocolVersion: string | undefined;
  readonly listChanges: () => number;
  listToolNames(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>, options?: { onprogress?: (progress: unknown) => void; signal?: AbortSignal }): Promise<{
    content: Array<{ type: string; text?: string }>;
    structuredContent?: unknown;
    isError?: boolean;
  }>;
  close(): Promise<void>;
}

async function v1(): Promise<TestClient> {
  const client = new ClientV1({ name: 'stdio-v1', version: '1.0.0' });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes += 1;
  });
  await client.connect(new StdioTransportV1(serverParams));
  return {
    protocolVersion: client.getServerVersion() === undefined ? undefined : '2025-11-25',
    listChanges: () => changes,
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: (name, args, options) => client.callTool({ name, arguments: args }, undefined, options) as ReturnType<TestClient['call']>,
    close: () => client.close(),
  };
}

async function v2(mode: 'legacy' | 'auto'): Promise<TestClient> {
  let changes = 0;
  const client = new ClientV2(
    { name: `stdio-v2-${mode}`, version: '1.0.0' },
    { versionNegotiation: { mode }, listChanged: { tools: { onChanged: () => void (changes += 1) } } },
  );
  await client.connect(new StdioTransportV2(serverParams));
  return {
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listChanges: () => changes,
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: (name, args, options) => client.callTool({ name, arguments: args }, options) as ReturnType<TestClient['call']>,
    close: () => client.close(),
  };
}

beforeAll(() => {
  if (!existsSync(fileURLToPath(new URL('../../packages/mcp-server/dist/stdio.js', import.meta.url)))) {
    throw new Error('The stdio fixture imports built packages: run `pnpm --filter @capnode/mcp-server... build` first.');
  }
});

describe.each([
  ['SDK v1 client', v1, '2025-11-25'],
  ['SDK v2 client (initialize)', () => v2('legacy'), '2025-11-25'],
  ['SDK v2 client (2026-07-28)', () => v2('auto'), '2026-07-28'],
] as const)('%s over stdio', (_label, connect, expectedVersion) => {
  it('lists, calls, streams progress, reports errors, cancels and hears list_changed', async () => {
    const client = await connect();
    try {
      expect(client.protocolVersion).toBe(expectedVersion);
      const names = await client.listToolNames();
      expect(names).toEqual(expect.arrayContaining(['fixture.echo', 'fixture.slow', 'control.addLate']));

      const whoami = await client.call('fixture.whoami', {});
      expect(whoami.structuredContent).toMatchObject({ transport: 'mcp-stdio', caller: expect.stringMatching(/^stdio-v/) });

      const echo = await client.call('fixture.echo', { text: 'over stdio' });
      expect(echo.structuredContent).toEqual({ text: 'over stdio' });

      const progress: unknown[] = [];
      const slow = await client.call('fixture.slow', { ms: 60, steps: 2 }, { onprogress: (update) => progress.push(update) });
      expect(slow.content[0]?.text).toBe('slept 60 ms');
      // Both notifications are written before the result (asserted on the raw stream below); an SDK
      // client that reads the last one in the same chunk as the result may drop it, so at least one.
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toEqual({ progress: 1, total: 2, message: 'step 1/2' });

      const failed = await client.call('fixture.fail', {});
      expect(failed.isError).toBe(true);
      const thrown = await client.call('fixture.throw', {});
      expect(thrown.isError).toBe(true);
      expect(thrown.content[0]?.text).not.toContain('SECRET');

      const controller = new AbortController();
      const pending = client.call('fixture.slow', { ms: 30_000 }, { signal: controller.signal });
      setTimeout(() => controller.abort('test cancels'), 100);
      await expect(pending).rejects.toThrow();
      // The server stays usable after the cancellation.
      expect((await client.call('fixture.echo', { text: 'after' })).structuredContent).toEqual({ text: 'after' });

      await client.call('control.addLate', {});
      await eventually(() => client.listChanges() > 0);
      expect(await client.listToolNames()).toContain('late.hello');
    } finally {
      await client.close();
    }
  });
});

describe('stdio process hygiene', () => {
  it('writes only JSON-RPC to stdout, logs to stderr, and exits when stdin closes', async () => {
    const child = spawn(process.execPath, [fixture], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fixture.log', arguments: {} } });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fixture.throw', arguments: {} } });
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms: 20, steps: 2 }, _meta: { progressToken: 'p' } } });
    await eventually(() => stdout.includes('"id":3') && stdout.includes('"id":4'));
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    expect(lines.some((line) => line.includes('"protocolVersion":"2025-06-18"'))).toBe(true);
    expect(stdout).not.toContain('SECRET');
    const slowLines = lines.filter((line) => line.includes('"progressToken":"p"') || line.includes('"id":4'));
    expect(slowLines.map((line) => JSON.parse(line).params?.progress ?? 'result')).toEqual([1, 2, 'result']);
    expect(stderr).toContain('fixture stdio server ready');
  });
});
