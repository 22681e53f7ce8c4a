#!/usr/bin/env node
// MCP client runtime benchmarks (@capnode/mcp-client): connect fan-out, catalog build, call overhead.
// Run after `pnpm --filter @capnode/mcp-client build`: `node bench/mcpClient.mjs`, or import
// `benchMcpClient` from bench/run.mjs. Each measurement has its reference measured in the same run.
//
// Connect fan-out uses bench/fixtures/mcpStdioLite.sh, a POSIX sh MCP server that starts in about a
// millisecond: the figure measures the runtime's fan-out (spawn, handshake, listing, catalog), not
// server start-up cost. Its reference is N bare SDK v2 clients (the SDK's own stdio transport) doing
// connect + tools/list against the same servers in the same rounds, in several fresh processes (one
// process's JIT and heap layout shift the ratio for all of its rounds). The same run also reports, for
// information, (a) the floor: bare spawn of N such processes with one JSON-RPC round trip and no MCP
// client, and (b) the fan-out with real SDK v2 servers (bench/fixtures/stdioSdk.mjs, one Node process
// each), which is CPU-bound on a small machine.
//
// Environment: BENCH_MCP_SERVERS (default 20), BENCH_MCP_TOOLS (default 1000), BENCH_MCP_CALLS (default 300),
// BENCH_MCP_ROUNDS (default 5), BENCH_MCP_FANOUT_PROCESSES (default 3), BENCH_MCP_SDK_SERVERS=0 skips the
// SDK-server fan-out.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = { index: join(rootDir, 'packages/mcp-client/dist/index.js'), node: join(rootDir, 'packages/mcp-client/dist/node.js') };
const fixture = join(rootDir, 'tests/mcp-client/fixtures/stdioServer.mjs');
const liteServer = { command: '/bin/sh', args: [join(rootDir, 'bench/fixtures/mcpStdioLite.sh')] };
const sdkServer = { command: process.execPath, args: [join(rootDir, 'bench/fixtures/stdioSdk.mjs')] };

const num = (name, fallback) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/** Spawns `count` copies of `server` and waits for each to answer one JSON-RPC request: the floor under any client. */
async function bareSpawn(server, count) {
  const one = () =>
    new Promise((resolve, reject) => {
      const child = spawn(server.command, server.args, { stdio: ['pipe', 'pipe', 'ignore'] });
      child.once('error', reject);
      child.stdout.once('data', () => {
        child.stdin.end();
        child.once('close', resolve);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    });
  const started = performance.now();
  await Promise.all(Array.from({ length: count }, one));
  return performance.now() - started;
}

/** `count` bare SDK v2 clients (the SDK's own stdio transport) connecting and listing in parallel: the handshake floor under any SDK-based runtime. */
async function bareSdk(Client, StdioClientTransport, server, count) {
  const one = async () => {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args, stderr: 'ignore' }));
    await client.listTools();
    return client;
  };
  const started = performance.now();
  const clients = await Promise.all(Array.from({ length: count }, one));
  const elapsed = performance.now() - started;
  await Promise.all(clients.map((client) => client.close()));
  return elapsed;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Milliseconds until a runtime over `count` copies of `server` is created; every one of them must
 * connect. The config is parsed before the clock starts, as the SDK clients get their options ready-made.
 */
async function connectRuntime({ createMcpRuntime, parseMcpConfig }, count, server, label) {
  const config = configFor(parseMcpConfig, count, server);
  const started = performance.now();
  const runtime = await createMcpRuntime(config, { agent: 'bench', logger: quiet });
  const elapsed = performance.now() - started;
  const connected = runtime.diagnostics().filter((d) => d.state === 'connected').length;
  await runtime.close();
  if (connected !== count) throw new Error(`${label}: only ${connected}/${count} servers connected`);
  return elapsed;
}

function configFor(parseMcpConfig, count, server = { command: process.execPath, args: [fixture, 'ok'] }) {
  const servers = Array.from({ length: count }, (_, i) => ({ name: `s${i}`, ...server }));
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

/** Per-round connect timings of the floor, the runtime and the bare SDK clients, all in this process. */
export async function fanOutRounds() {
  const { parseMcpConfig } = await import(pathToFileURL(dist.index).href);
  const { createMcpRuntime } = await import(pathToFileURL(dist.node).href);
  const { Client } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const serverCount = num('BENCH_MCP_SERVERS', 20);
  const out = { floorOne: [], floorMany: [], sdkMany: [], runtimeMany: [], overFloor: [], overSdk: [] };
  const rounds = Math.max(num('BENCH_MCP_ROUNDS', 5) * 2, 11);
  for (let round = 0; round <= rounds; round += 1) {
    const measured = {};
    const steps = [
      ['floor', () => bareSpawn(liteServer, serverCount)],
      ['runtime', () => connectRuntime({ createMcpRuntime, parseMcpConfig }, serverCount, liteServer, 'lite')],
      ['sdk', () => bareSdk(Client, StdioClientTransport, liteServer, serverCount)],
    ];
    for (let i = 0; i < steps.length; i += 1) {
      const [key, run] = steps[(i + round) % steps.length];
      measured[key] = await run();
    }
    if (round === 0) continue; // warm-up
    out.floorOne.push(await bareSpawn(liteServer, 1));
    out.floorMany.push(measured.floor);
    out.runtimeMany.push(measured.runtime);
    out.sdkMany.push(measured.sdk);
    out.overFloor.push(measured.runtime / measured.floor);
    out.overSdk.push(measured.runtime / measured.sdk);
  }
  return out;
}

/** {@link fanOutRounds} in `BENCH_MCP_FANOUT_PROCESSES` (default 3) fresh processes, one after another, pooled. */
async function fanOutInProcesses() {
  const processes = num('BENCH_MCP_FANOUT_PROCESSES', 3);
  const pooled = { floorOne: [], floorMany: [], sdkMany: [], runtimeMany: [], overFloor: [], overSdk: [], processes: [] };
  for (let i = 0; i < processes; i += 1) {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], { env: { ...process.env, BENCH_MCP_FANOUT_CHILD: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (text += chunk));
    const code = await new Promise((resolve, reject) => child.once('error', reject).once('close', resolve));
    if (code !== 0) throw new Error(`connect fan-out process ${i + 1} exited with ${code}`);
    const rounds = JSON.parse(text);
    for (const key of Object.keys(rounds)) pooled[key].push(...rounds[key]);
    pooled.processes.push(median(rounds.overSdk));
  }
  return pooled;
}

export async function benchMcpClient({ log = console.log } = {}) {
  if (!existsSync(dist.node)) return { skipped: 'mcp-client: packages/mcp-client/dist missing; run pnpm build first' };
  const { parseMcpConfig } = await import(pathToFileURL(dist.index).href);
  const { createMcpRuntime } = await import(pathToFileURL(dist.node).href);
  const { Client, InMemoryTransport } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const rounds = num('BENCH_MCP_ROUNDS', 5);
  const serverCount = num('BENCH_MCP_SERVERS', 20);
  const toolCount = num('BENCH_MCP_TOOLS', 1000);
  const calls = num('BENCH_MCP_CALLS', 300);
  const results = {};

  // 1. Connect fan-out: N stdio servers in parallel vs one, interleaved rounds, median of per-round ratios.
  const fanOut = async (server, label) => {
    const one = [];
    const many = [];
    const ratios = [];
    for (let round = 0; round <= rounds; round += 1) {
      const pair = [];
      for (const count of round % 2 === 0 ? [1, serverCount] : [serverCount, 1]) pair[count === 1 ? 0 : 1] = await connectRuntime({ createMcpRuntime, parseMcpConfig }, count, server, label);
      if (round === 0) continue; // warm-up
      one.push(pair[0]);
      many.push(pair[1]);
      ratios.push(pair[1] / pair[0]);
    }
    return { oneMs: median(one), manyMs: median(many), servers: serverCount, ratio: median(ratios) };
  };
  // The floor, the runtime and the bare SDK clients run in the same rounds, in rotating order, in
  // several fresh processes; the target is the median of all per-round ratios. Spawn cost drifts with
  // the heap and the machine's load, and a process's JIT and heap layout shift the ratio for all its
  // rounds, so references measured in other rounds or one process would not be the same conditions.
  const pooled = await fanOutInProcesses();
  results.connect = {
    ...(await fanOut(liteServer, 'lite')),
    manyMs: median(pooled.runtimeMany),
    overFloor: median(pooled.overFloor),
    overSdk: median(pooled.overSdk),
    processes: pooled.processes,
    floor: { oneMs: median(pooled.floorOne), manyMs: median(pooled.floorMany), ratio: median(pooled.floorMany) / median(pooled.floorOne) },
    sdkFloor: { manyMs: median(pooled.sdkMany) },
  };
  log(
    `connect (sh fixture): 1 server ${results.connect.oneMs.toFixed(1)} ms, ${serverCount} servers ${results.connect.manyMs.toFixed(1)} ms, ratio ${results.connect.ratio.toFixed(2)} (informational); ` +
      `floor (bare spawn + 1 round trip, no client): ${results.connect.floor.oneMs.toFixed(1)} / ${results.connect.floor.manyMs.toFixed(1)} ms, ratio ${results.connect.floor.ratio.toFixed(2)}; ` +
      `bare SDK v2 clients (connect + tools/list, no runtime): ${results.connect.sdkFloor.manyMs.toFixed(1)} ms for ${serverCount} = ${(results.connect.sdkFloor.manyMs / results.connect.floor.manyMs).toFixed(2)}x the spawn floor; ` +
      `runtime / SDK clients ${results.connect.overSdk.toFixed(3)} (median of per-round ratios over ${results.connect.processes.length} processes, whose own medians are ${results.connect.processes.map((r) => r.toFixed(3)).join(', ')}; target <= 1.1), runtime / spawn floor ${results.connect.overFloor.toFixed(3)}`,
  );
  // 2. Catalog build: re-list + validate + name + register 1,000 tools from an in-memory server.
  {
    const runtime = await createMcpRuntime(configFor(parseMcpConfig, 1), { agent: 'bench', logger: quiet, connector: memoryConnector(InMemoryTransport, toolCount) });
    for (let i = 0; i < 5; i += 1) await runtime.refresh();
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

  // 3. Call overhead: runtime.call vs a bare SDK v2 client, each against its own process of the same
  // fixture server; warm-up, then interleaved rounds (order alternating), median of per-round ratios.
  {
    const runtime = await createMcpRuntime(configFor(parseMcpConfig, 1), { agent: 'bench', logger: quiet });
    const bare = new Client({ name: 'bench', version: '1' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [fixture, 'ok'], stderr: 'ignore' });
    await bare.connect(transport);
    const viaRuntime = async (n) => {
      for (let i = 0; i < n; i += 1) await runtime.call('s0__echo', { text: 'x' });
    };
    const viaSdk = async (n) => {
      for (let i = 0; i < n; i += 1) await bare.callTool({ name: 'echo', arguments: { text: 'x' } });
    };
    for (let i = 0; i < 3; i += 1) {
      await viaRuntime(calls);
      await viaSdk(calls);
    }
    const rt = [];
    const sdk = [];
    const ratios = [];
    for (let round = 0; round < rounds * 2; round += 1) {
      const pair = {};
      for (const [run, key] of round % 2 === 0 ? [[viaSdk, 'sdk'], [viaRuntime, 'rt']] : [[viaRuntime, 'rt'], [viaSdk, 'sdk']]) {
        const started = performance.now();
        await run(calls);
        pair[key] = performance.now() - started;
      }
      sdk.push(pair.sdk);
      rt.push(pair.rt);
      ratios.push(pair.rt / pair.sdk);
    }
    await runtime.close();
    await bare.close();
    results.calls = { calls, sdkMs: median(sdk), runtimeMs: median(rt), ratio: median(ratios), perCallUs: ((median(rt) - median(sdk)) / calls) * 1000 };
    log(
      `calls: ${calls} sequential echo calls x ${rounds * 2} interleaved rounds: bare SDK ${results.calls.sdkMs.toFixed(1)} ms, runtime ${results.calls.runtimeMs.toFixed(1)} ms, ` +
        `median ratio ${results.calls.ratio.toFixed(3)} (target <= 1.05), ~${results.calls.perCallUs.toFixed(0)} us added per call`,
    );
  }
  // 4. Connect fan-out with real SDK v2 servers (one Node process each; CPU-bound on a small machine).
  if (process.env.BENCH_MCP_SDK_SERVERS !== '0') {
    results.connectSdk = await fanOut(sdkServer, 'sdk');
    log(`connect (SDK v2 Node servers, informational): 1 server ${results.connectSdk.oneMs.toFixed(1)} ms, ${serverCount} servers ${results.connectSdk.manyMs.toFixed(1)} ms, ratio ${results.connectSdk.ratio.toFixed(2)}`);
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.env.BENCH_MCP_FANOUT_CHILD === '1') {
  process.stdout.write(JSON.stringify(await fanOutRounds()));
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = await benchMcpClient();
  if (results.skipped) console.log(results.skipped);
}
