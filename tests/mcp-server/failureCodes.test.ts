// isError tool results carry a machine-readable failure code under _meta["capnode/failure"] on every
// transport path (HTTP both eras and the 2026-07-28 fast path, stdio, real SDK clients), and arguments
// nested deeper than MAX_ARGUMENTS_DEPTH get a clear invalid_arguments error, never a stack overflow.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectV1, connectV2, postJson, spawnRawStdio, useSuiteFixtureServer } from './helpers.js';

/** `MAX_ARGUMENTS_DEPTH` of @capnode/protocol (documented in the mcp-server README). */
const MAX_ARGUMENTS_DEPTH = 64;
const REVISION = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'failure-codes', version: '1' },
};

/** `{"a":{"a":…1…}}`, `depth` objects deep, as text (JSON.stringify would overflow on it). */
function deepObjectText(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

const deepCall = (id: number | string, name: string, depth: number, meta?: Record<string, unknown>) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${deepObjectText(depth)}${meta ? `,"_meta":${JSON.stringify(meta)}` : ''}}}`;

const CASES = [
  ['fixture.fail', {}, 'failed'],
  ['fixture.deny', {}, 'denied'],
  ['fixture.throw', {}, 'internal'],
  ['no.such.tool', {}, 'unknown_command'],
  ['fixture.echo', { text: 42 }, 'invalid_arguments'],
  ['fixture.echo', [1, 2], 'invalid_arguments'],
] as const;

interface ToolResultMessage {
  result: { isError?: boolean; content: Array<{ type: string; text: string }>; _meta?: Record<string, any> };
}

function expectFailure(text: string, code: string): ToolResultMessage['result'] {
  expect(text).not.toMatch(/Maximum call stack|Cannot read properties|SECRET|\n\s+at /);
  const { result } = JSON.parse(text) as ToolResultMessage;
  expect(result.isError).toBe(true);
  expect(result._meta?.['capnode/failure']).toEqual({ code });
  expect(result.content[0]?.text.length).toBeGreaterThan(0);
  return result;
}

describe('failure codes over HTTP', () => {
  const ctx = useSuiteFixtureServer();

  it.each(CASES)('initialize era: %s %j → %s', async (name, args, code) => {
    const response = await postJson(ctx.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    expectFailure(response.body, code);
  });

  it.each(CASES)('2026-07-28 fast path and SDK entry: %s %j → %s', async (name, args, code) => {
    const body = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args, _meta: envelope } };
    const fast = await postJson(ctx.url, body, { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': name });
    const entry = await postJson(ctx.url, body, { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from(name).toString('base64')}?=` });
    const result = expectFailure(fast.body, code);
    expect(result._meta?.['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'capnode' });
    expect(JSON.parse(entry.body)).toEqual(JSON.parse(fast.body));
  });

  it('malformed tools/call params carry invalid_arguments; a cancelled call carries cancelled', async () => {
    expectFailure((await postJson(ctx.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: '' } })).body, 'invalid_arguments');
    const pending = postJson(ctx.url, { jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'fixture.slow', arguments: { ms: 20_000 } } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await postJson(ctx.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1' } });
    expectFailure((await pending).body, 'cancelled');
  });

  it.each([100_000, MAX_ARGUMENTS_DEPTH + 1])('a %i-deep argument object gets invalid_arguments on every HTTP path', async (depth) => {
    for (const name of ['fixture.echo', 'fixture.log']) {
      const legacy = expectFailure((await postJson(ctx.url, deepCall(4, name, depth))).body, 'invalid_arguments');
      expect(legacy.content[0]?.text).toBe(`Invalid arguments for ${name}: they nest deeper than ${MAX_ARGUMENTS_DEPTH} levels.`);
      const modern = { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call' };
      expectFailure((await postJson(ctx.url, deepCall(5, name, depth, envelope), { ...modern, 'mcp-name': name })).body, 'invalid_arguments');
      const encodedName = `=?base64?${Buffer.from(name).toString('base64')}?=`;
      expectFailure((await postJson(ctx.url, deepCall(6, name, depth, envelope), { ...modern, 'mcp-name': encodedName })).body, 'invalid_arguments');
    }
    // Exactly the limit is accepted (the schema-less tool runs).
    const atLimit = await postJson(ctx.url, deepCall(7, 'fixture.log', MAX_ARGUMENTS_DEPTH));
    expect(JSON.parse(atLimit.body).result).toEqual({ content: [{ type: 'text', text: 'logged' }] });
  });

  it.each([
    ['SDK v1', connectV1],
    ['SDK v2 (2026-07-28 when offered)', connectV2],
  ] as const)('%s client sees the code in _meta', async (_label, connect) => {
    await using client = await connect(ctx.url);
    const denied = (await client.callTool({ name: 'fixture.deny', arguments: {} })) as { isError?: boolean; _meta?: Record<string, unknown> };
    expect(denied.isError).toBe(true);
    expect(denied._meta?.['capnode/failure']).toEqual({ code: 'denied' });
    const ok = (await client.callTool({ name: 'fixture.echo', arguments: { text: 'x' } })) as { _meta?: Record<string, unknown> };
    expect(ok._meta?.['capnode/failure']).toBeUndefined();
  });
});

describe('failure codes over stdio', () => {
  beforeAll(() => {
    if (!existsSync(fileURLToPath(new URL('../../packages/mcp-server/dist/stdio.js', import.meta.url)))) {
      throw new Error('The stdio fixture imports built packages: run `pnpm --filter @capnode/mcp-server... build` first.');
    }
  });

  it.each(['2025-06-18', REVISION])('%s: codes in _meta, and a 100,000-deep argument object is invalid_arguments', async (version) => {
    await using stdio = spawnRawStdio();
    const modern = version === REVISION;
    if (!modern) {
      await stdio.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      stdio.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    }
    const meta = modern ? { _meta: envelope } : {};
    for (const [index, [name, args, code]] of CASES.entries()) {
      const answer = await stdio.request({ jsonrpc: '2.0', id: index + 1, method: 'tools/call', params: { name, arguments: args, ...meta } });
      expectFailure(JSON.stringify(answer), code);
    }
    stdio.write(deepCall('deep', 'fixture.echo', 100_000, modern ? envelope : undefined));
    const deep = await stdio.request({ jsonrpc: '2.0', id: 'after-deep', method: 'tools/list', ...(modern ? { params: { _meta: envelope } } : {}) });
    expect(deep, JSON.stringify(deep)).toHaveProperty('result');
    const deepLine = stdio.lines.find((line) => line.includes('"id":"deep"'));
    expect(deepLine).toBeDefined();
    expectFailure(deepLine!, 'invalid_arguments');
    expect(stdio.stderr()).not.toMatch(/Maximum call stack/);
  });
});
