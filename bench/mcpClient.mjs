#!/usr/bin/env node
// MCP client runtime benchmarks (@capnode/mcp-client): connect fan-out, catalog build, call overhead.
// Run after `pnpm --filter @capnode/mcp-client build`: `node bench/mcpClient.mjs`, or import
// `benchMcpClient` from bench/run.mjs. Each measurement has its reference measured in the same run.
//
// Environment: BENCH_MCP_SERVERS (default 20), BENCH_MCP_TOOLS (default 1000), BENCH_MCP_CALLS (default 500),
// BENCH_MCP_ROUNDS (default 3).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = { index: join(rootDir, 'packages/mcp-client/dist/index.js'), node: join(rootDir, 'packages/mcp-client/dist/node.js') };
const fixture = join(rootDir, 'tests/mcp-client/fixtures/stdioServer.mjs');

const num = (name, fallback) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

function configFor(parseMcpConfig, count, extra = {}) {
  const servers = Array.from({ length: count }, (_, i) => ({ name: `s${i}`, command: process.execPath, args: [fixture, 'ok'], ...extra }));
  return parseMcpConfig({
    servers,
    bundles: { all: { servers: servers.map((s) => s.name) } },
    agents: { bench: { mcp_bundles: ['all'] } },
    risk_profiles: { bench: { autonomy: 'full' } },
  }).config;
}

/** A connector whose single server lives in memory and lists `count` tools (no process, no I/O). */
function memoryConnector(InMemoryTransport, count) {
  const tools = Array.from({ length: count }, (_, i) => ({ name: `tool_${i}.op`, description: `Tool number ${i}.`, inputSchema: { type: 'object', properties: { x: { type: 'number' } } } }));
  return async ({ createClient }) => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    serverSide.onmessage = (message) => {
      if (message.id === undefined) return;
      const reply = (result) => void serverSide.send({ jsonrpc: '2.0', id: message.id, result });
      if (message.method === 'initialize') reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'mem', version: '1' } });
      else if (message.method === 'tools/list') reply({ tools });
      else reply({ content: [{ type: 'text', text: 'ok' }] });
    };
    await serverSide.start();
    const client = createClient();
    await client.connect(clientSide);
    return { client, transport: 'stdio', close: () => client.close() };
  };
}

export async function benchMcpClient({ log = console.log } = {}) {
  if (!existsSync(dist.node)) return { skipped: 'mcp-client: packages/mcp-client/dist missing; run pnpm build first' };
  const { parseMcpConfig } = await import(pathToFileURL(dist.index).href);
  const { createMcpRuntime } = await import(pathToFileURL(dist.node).href);
  const { Client, InMemoryTransport } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const rounds = num('BENCH_MCP_ROUNDS', 3);
  const serverCount = num('BENCH_MCP_SERVERS', 20);
  const toolCount = num('BENCH_MCP_TOOLS', 1000);
  const calls = num('BENCH_MCP_CALLS', 500);
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const results = {};

  // 1. Connect fan-out: N stdio servers in parallel vs one, alternating.
  const one = [];
  const many = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const [count, into] of [[1, one], [serverCount, many]]) {
      const started = performance.now();
      const runtime = await createMcpRuntime(configFor(parseMcpConfig, count), { agent: 'bench', logger: quiet });
      into.push(performance.now() - started);
      const connected = runtime.diagnostics().filter((d) => d.state === 'connected').length;
      await runtime.close();
      if (connected !== count) throw new Error(`only ${connected}/${count} servers connected`);
    }
  }
  results.connect = { oneMs: median(one), manyMs: median(many), servers: serverCount, ratio: median(many) / median(one) };
  log(`connect: 1 server ${results.connect.oneMs.toFixed(1)} ms, ${serverCount} servers ${results.connect.manyMs.toFixed(1)} ms, ratio ${results.connect.ratio.toFixed(2)} (target <= 1.5)`);

  // 2. Catalog build: re-list + validate + name + register 1,000 tools from an in-memory server.
  {
    const runtime = await createMcpRuntime(configFor(parseMcpConfig, 1), { agent: 'bench', logger: quiet, connector: memoryConnector(InMemoryTransport, toolCount) });
    const samples = [];
    for (let i = 0; i < 20; i += 1) {
      const started = performance.now();
      await runtime.refresh();
      samples.push(performance.now() - started);
    }
    const names = runtime.toolNames().length;
    await runtime.close();
    results.catalog = { tools: names, medianMs: median(samples) };
    log(`catalog: ${names} tools re-listed and rebuilt in ${results.catalog.medianMs.toFixed(2)} ms (median of 20; target < 20 ms)`);
  }

  // 3. Call overhead: runtime.call vs a bare SDK client, same fixture server, sequential, alternating.
  {
    const runtime = await createMcpRuntime(configFor(parseMcpConfig, 1), { agent: 'bench', logger: quiet });
    const bare = new Client({ name: 'bench', version: '1' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [fixture, 'ok'], stderr: 'ignore' });
    await bare.connect(transport);
    const viaRuntime = async () => {
      for (let i = 0; i < calls; i += 1) await runtime.call('s0__echo', { text: 'x' });
    };
    const viaSdk = async () => {
      for (let i = 0; i < calls; i += 1) await bare.callTool({ name: 'echo', arguments: { text: 'x' } });
    };
    await viaRuntime();
    await viaSdk();
    const rt = [];
    const sdk = [];
    for (let round = 0; round < rounds; round += 1) {
      for (const [run, into] of [[viaSdk, sdk], [viaRuntime, rt]]) {
        const started = performance.now();
        await run();
        into.push(performance.now() - started);
      }
    }
    await runtime.close();
    await bare.close();
    results.calls = { calls, sdkMs: median(sdk), runtimeMs: median(rt), ratio: median(rt) / median(sdk) };
    log(`calls: ${calls} sequential echo calls: bare SDK ${results.calls.sdkMs.toFixed(1)} ms, runtime ${results.calls.runtimeMs.toFixed(1)} ms, ratio ${results.calls.ratio.toFixed(3)} (target <= 1.1)`);
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = await benchMcpClient();
  if (results.skipped) console.log(results.skipped);
}
