import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { parseMcpConfig } from './config.js';
import { createMcpRuntime } from './node.js';

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
