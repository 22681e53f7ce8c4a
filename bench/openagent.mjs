// OpenAgent channel round trip (issue 17): sequential `device.info` calls through the OpenAgent capability
// channel (a loopback `ws` bridge speaking the server side: client_tool_call → client_tool_result) against
// the same call over the host's MCP HTTP endpoint (sessionless 2025-11-25 `tools/call` with the bearer
// token), same host, same process, interleaved rounds with alternating order; target: channel p50 ≤ 1.2 ×
// MCP HTTP p50 (median of per-round ratios). Run alone: `node bench/openagent.mjs` after `pnpm build`.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { callTool } from './lib/hostBench.mjs';
import { median, percentile, rootDir } from './lib/util.mjs';

const CALLS = Number(process.env.BENCH_OPENAGENT_CALLS ?? 400);
const ROUNDS = Number(process.env.BENCH_OPENAGENT_ROUNDS ?? 5);

/** OpenAgent's `arguments_sha256` of `{}` (the canonical text `{}`). */
const EMPTY_HASH = createHash('sha256').update('{}').digest('hex');

async function startBridge(WebSocketServer) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws/capabilities' });
  await new Promise((resolve) => server.once('listening', resolve));
  let socket;
  let generation;
  const waiting = new Map();
  const registered = new Promise((resolve) => {
    server.on('connection', (ws) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data));
        if (frame.type === 'capability_hello') {
          socket = ws;
          generation = frame.generation;
          ws.send(JSON.stringify({ type: 'capability_hello_ack', protocol: frame.protocol, device_id: 'bench-device', account_id: 'bench-account', client_instance_id: frame.client_instance_id, generation, accepted: true }));
          resolve();
        } else if (frame.type === 'capability_heartbeat') {
          ws.send(JSON.stringify({ type: 'capability_heartbeat_ack', generation: frame.generation, ts_ms: Date.now() }));
        } else if (frame.type === 'client_tool_result') {
          waiting.get(frame.call_id)?.(frame);
          waiting.delete(frame.call_id);
        }
      });
    });
  });
  let next = 0;
  return {
    url: `ws://127.0.0.1:${server.address().port}/ws/capabilities`,
    registered,
    call() {
      next += 1;
      const callId = `bench-${next}`;
      const done = new Promise((resolve) => waiting.set(callId, resolve));
      socket.send(JSON.stringify({ type: 'client_tool_call', call_id: callId, generation, server: 'capnode', tool: 'device.info', args: {}, deadline_ms: 30_000, session_id: null, account_id: 'bench-account', idempotency_key: callId, arguments_sha256: EMPTY_HASH }));
      return done;
    },
    close: () => new Promise((resolve) => { for (const client of server.clients) client.terminate(); server.close(resolve); }),
  };
}

async function timed(count, once) {
  const samples = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await once();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

export async function benchOpenAgent(log = console.log) {
  const hostEntry = join(rootDir, 'packages/host/dist/index.js');
  if (!existsSync(hostEntry)) return { skipped: 'build first (packages/host/dist/index.js)' };
  const { createHost } = await import(pathToFileURL(hostEntry).href);
  const { WebSocketServer } = await import('ws');
  const bridge = await startBridge(WebSocketServer);
  const home = mkdtempSync(join(tmpdir(), 'capnode-bench-openagent-'));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ dashboard: { enabled: false }, openagent: { enabled: true, url: bridge.url, deviceId: 'bench-device', accountId: 'bench-account' } }), { mode: 0o600 });
  const host = createHost({ home, port: 0, plugins: false, builtinPlugins: false, onLog: () => undefined });
  try {
    const status = await host.start();
    const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
    await bridge.registered;
    const overHttp = () => callTool(status.mcp.url, token, 'device.info', {});
    const overChannel = async () => {
      const frame = await bridge.call();
      if (frame.error || frame.result?.isError) throw new Error(`channel: ${JSON.stringify(frame).slice(0, 200)}`);
    };
    await timed(100, overHttp);
    await timed(100, overChannel);
    const ratios = [];
    const channelP50 = [];
    const httpP50 = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['channel', 'http'] : ['http', 'channel'];
      const result = {};
      for (const which of order) result[which] = await timed(CALLS, which === 'channel' ? overChannel : overHttp);
      const c = percentile(result.channel, 50);
      const h = percentile(result.http, 50);
      channelP50.push(c);
      httpP50.push(h);
      ratios.push(c / h);
      log(`round ${round + 1}: channel p50 ${c.toFixed(3)} ms (p99 ${percentile(result.channel, 99).toFixed(3)}), MCP HTTP p50 ${h.toFixed(3)} ms (p99 ${percentile(result.http, 99).toFixed(3)}), ratio ${(c / h).toFixed(3)}`);
    }
    const ratio = median(ratios);
    return { channelP50Ms: median(channelP50), httpP50Ms: median(httpP50), ratio, target: 1.2, pass: ratio <= 1.2 };
  } finally {
    await host.close();
    await bridge.close();
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchOpenAgent((line) => console.log(`  ${line}`));
  if (result.skipped) console.log(`SKIP openagent: ${result.skipped}`);
  else console.log(`${result.pass ? 'PASS' : 'MISS'} openagent device.info round trip: channel p50 ${result.channelP50Ms.toFixed(3)} ms vs MCP HTTP p50 ${result.httpP50Ms.toFixed(3)} ms, ratio ${result.ratio.toFixed(3)} (target ≤ ${result.target})`);
}
