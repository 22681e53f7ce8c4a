import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { lateCapability } from './fixtures/capabilities.mjs';
import { startFixtureServer, TOKEN } from './helpers.js';
import { eventually } from '../support/poll.js';

/** The calls these tests make, over either SDK generation. */
interface TestClient {
  readonly protocolVersion: string | undefined;
  listToolNames(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>, options?: { onprogress?: (progress: unknown) => void; signal?: AbortSignal }): Promise<{
    content: Array<{ type: string; text?: string; mimeType?: string }>;
    structuredContent?: unknown;
    isError?: boolean;
  }>;
  close(): Promise<void>;
}

const requestInit = { headers: { Authorization: `Bearer ${TOKEN}` } };

async function v1(url: string): Promise<TestClient> {
  const client = new ClientV1({ name: 'interop-v1', version: '1.0.0' });
  const transport = new HttpTransportV1(new URL(url), { requestInit });
  await client.connect(transport);
  return {
    protocolVersion: transport.protocolVersion,
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: (name, args, options) => client.callTool({ name, arguments: args }, undefined, options) as ReturnType<TestClient['call']>,
    close: () => client.close(),
  };
}

async function v2(url: string, mode: 'legacy' | 'auto'): Promise<TestClient> {
  const client = new ClientV2({ name: `interop-v2-${mode}`, version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new HttpTransportV2(new URL(url), { requestInit }));
  return {
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: (name, args, options) => client.callTool({ name, arguments: args }, options) as ReturnType<TestClient['call']>,
    close: () => client.close(),
  };
}

const clients: Array<[string, (url: string) => Promise<TestClient>, string, string | null]> = [
  // Initialize-era SDK clients get a session (they accept SSE), which knows the client from initialize;
  // 2026-07-28 requests name their client in every request.
  ['SDK v1 client', v1, '2025-11-25', 'interop-v1'],
  ['SDK v2 client (initialize)', (url) => v2(url, 'legacy'), '2025-11-25', 'interop-v2-legacy'],
  ['SDK v2 client (2026-07-28 per-request)', (url) => v2(url, 'auto'), '2026-07-28', 'interop-v2-auto'],
];

describe.each(clients)('%s over HTTP', (_label, connect, expectedVersion, expectedCaller) => {
  let ctx: Awaited<ReturnType<typeof startFixtureServer>>;
  let client: TestClient;

  beforeAll(async () => {
    ctx = await startFixtureServer();
    client = await connect(ctx.server.url);
  });
  afterAll(async () => {
    await client.close();
    await ctx.server.close();
  });

  it('negotiates the expected protocol era', () => {
    expect(client.protocolVersion).toBe(expectedVersion);
  });

  it('lists the registry, live', async () => {
    const names = await client.listToolNames();
    expect(names).toEqual(expect.arrayContaining(['fixture.echo', 'fixture.slow', 'fixture.image']));
    expect(names).not.toContain('late.hello');
    const remove = ctx.fixture.registry.register(lateCapability);
    try {
      expect(await client.listToolNames()).toContain('late.hello');
    } finally {
      remove();
    }
  });

  it('calls a tool and gets text plus structured content', async () => {
    const result = await client.call('fixture.echo', { text: 'interop' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text: 'interop' });
  });

  it('invokes through the pipeline as mcp-http with the request id and known caller', async () => {
    const result = await client.call('fixture.whoami', {});
    expect(result.structuredContent).toMatchObject({ transport: 'mcp-http', caller: expectedCaller });
    expect(typeof (result.structuredContent as { requestId: unknown }).requestId).toBe('string');
  });

  it('gets image content', async () => {
    const result = await client.call('fixture.image', {});
    expect(result.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
  });

  it('sees failures as tool errors', async () => {
    const unknown = await client.call('no.such.tool', {});
    expect(unknown.isError).toBe(true);
    expect(unknown.content[0]?.text).toContain('Unknown tool');
    const failed = await client.call('fixture.fail', {});
    expect(failed.isError).toBe(true);
    expect(failed.content[0]?.text).toContain('fixture failure');
    const thrown = await client.call('fixture.throw', {});
    expect(thrown.isError).toBe(true);
    expect(thrown.content[0]?.text).not.toContain('SECRET');
  });

  it('receives progress notifications', async () => {
    const progress: unknown[] = [];
    const result = await client.call('fixture.slow', { ms: 120, steps: 3 }, { onprogress: (update) => progress.push(update) });
    expect(result.content[0]?.text).toBe('slept 120 ms');
    expect(progress).toEqual([
      { progress: 1, total: 3, message: 'step 1/3' },
      { progress: 2, total: 3, message: 'step 2/3' },
      { progress: 3, total: 3, message: 'step 3/3' },
    ]);
  });

  it('cancels a running call: the capability signal is aborted', async () => {
    const before = ctx.fixture.probe.aborted;
    const startedBefore = ctx.fixture.probe.started;
    const controller = new AbortController();
    const pending = client.call('fixture.slow', { ms: 30_000, steps: 2 }, { signal: controller.signal });
    await eventually(() => ctx.fixture.probe.started === startedBefore + 1);
    controller.abort('test cancels');
    await expect(pending).rejects.toThrow();
    await eventually(() => ctx.fixture.probe.aborted === before + 1);
    await eventually(() => ctx.server.inFlight === 0);
  });
});

describe('tools/list_changed over HTTP', () => {
  it('reaches a 2026-07-28 client through its subscriptions/listen stream', async () => {
    await using ctx = await startFixtureServer();
    let changes = 0;
    const client = new ClientV2(
      { name: 'listen', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, listChanged: { tools: { onChanged: () => void (changes += 1) } } },
    );
    await client.connect(new HttpTransportV2(new URL(ctx.server.url), { requestInit }));
    try {
      const remove = ctx.fixture.registry.register(lateCapability);
      await eventually(() => changes > 0);
      remove();
    } finally {
      await client.close();
    }
  });
});
