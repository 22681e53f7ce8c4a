import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { parseMcpConfig } from './config.js';
import { createMcpRuntime } from './node.js';
import type { McpConnector } from './types.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A real HTTP endpoint refusing every request with 401, as an OAuth-protected MCP server does. */
async function startUnauthorizedServer(): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'invalid_token', error_description: 'Missing Authorization header' }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/mcp`;
}

test('a connect failure the transport also reported is stated once in the diagnostic', async () => {
  const url = await startUnauthorizedServer();
  const { config } = parseMcpConfig({
    servers: [{ name: 'locked', url }],
    bundles: { all: { servers: ['locked'] } },
    agents: { test: { mcp_bundles: ['all'] } },
  });
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  await using runtime = await createMcpRuntime(config, { agent: 'test', logger: quiet });
  const [diagnostic] = runtime.diagnostics();
  expect(diagnostic).toMatchObject({ state: 'failed' });
  expect(diagnostic!.error).toContain('Missing Authorization header');
  expect(diagnostic!.error!.split('Missing Authorization header')).toHaveLength(2);
});

test('a tools/call result of the wrong shape fails that call with a clear error; a good one passes through untouched', async () => {
  const { InMemoryTransport } = await import('@modelcontextprotocol/client');
  const results: Record<string, unknown> = {
    good: { content: [{ type: 'text', text: 'fine', annotations: { priority: 1 } }], structuredContent: { n: 1 }, extra: true },
    'not-array': { content: 'oops' },
    'bad-flag': { content: [], isError: 'yes' },
  };
  const connector: McpConnector = async ({ createClient }) => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    serverSide.onmessage = (message) => {
      if (!('id' in message) || !('method' in message)) return;
      const reply = (result: unknown) => void serverSide.send({ jsonrpc: '2.0', id: message.id, result } as never);
      const params = message.params as { protocolVersion?: string; name?: string };
      if (message.method === 'initialize') reply({ protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'mem', version: '1' } });
      else if (message.method === 'tools/list') reply({ tools: Object.keys(results).map((name) => ({ name, inputSchema: { type: 'object' } })) });
      else reply(results[params.name!]);
    };
    await serverSide.start();
    const client = createClient();
    await client.connect(clientSide);
    return { client, transport: 'stdio', close: () => client.close() };
  };
  const { config } = parseMcpConfig({
    servers: [{ name: 'mem', command: 'unused' }],
    bundles: { all: { servers: ['mem'] } },
    agents: { test: { mcp_bundles: ['all'] } },
    risk_profiles: { test: { autonomy: 'full' } },
  });
  await using runtime = await createMcpRuntime(config, { agent: 'test', logger: { debug() {}, info() {}, warn() {}, error() {} }, connector });
  expect(await runtime.call('mem__good')).toEqual({
    content: [{ type: 'text', text: 'fine', annotations: { priority: 1 } }],
    isError: false,
    attachments: [],
    structuredContent: { n: 1 },
  });
  const notArray = await runtime.call('mem__not-array');
  expect(notArray.isError).toBe(true);
  expect(notArray.content[0]!.text).toMatch(/failed 'not-array'.*content.*expected array/);
  const badFlag = await runtime.call('mem__bad-flag');
  expect(badFlag.isError).toBe(true);
  expect(badFlag.content[0]!.text).toMatch(/failed 'bad-flag'.*isError.*expected boolean/);
});
