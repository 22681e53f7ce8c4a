// Imported tools through the host's HTTP endpoint (issue 9's client-side targets):
// 1. latency: p50 of `ref__bench.echo` (imported over stdio from the SDK v2 reference server) against
//    the built-in `bench.echo` plus the bare stdio hop (a bare SDK v2 client calling the same server
//    directly), same host, same client (autocannon, 1 connection), interleaved rounds, median of
//    per-round ratios;
// 2. throughput: the same imported tool at 8 connections against `supergateway` (npm) exposing the same
//    stdio server over Streamable HTTP (stateful: one server process, one session), side by side.
// Every figure has its reference measured in the same run.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startLoadgen } from './http.mjs';
import { benchDir, freePort, median, rootDir, startChild, stopProcess } from './lib/util.mjs';

const TEXT = 'hello';
const headersFor = (token, extra = {}) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  ...(token ? { authorization: `Bearer ${token}` } : {}),
  ...extra,
});
const callBody = (id, name) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: TEXT } } });

async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Checks one call of `name` echoes the text (JSON or SSE body). */
async function probeCall(url, headers, name) {
  const reply = await post(url, headers, callBody('probe', name));
  if (reply.status !== 200 || !reply.text.includes(`"text":"${TEXT}"`) || reply.text.includes('"isError":true')) {
    throw new Error(`${name} at ${url}: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
}

/** Starts supergateway (stdio → Streamable HTTP, stateful) over the reference server; resolves with its URL and session headers. */
async function startSupergateway() {
  const bin = join(rootDir, 'node_modules/supergateway/dist/index.js');
  if (!existsSync(bin)) throw new Error('supergateway is not installed (pnpm install)');
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [bin, '--stdio', `${process.execPath} ${join(benchDir, 'fixtures/stdioSdk.mjs')}`, '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const stop = () => stopProcess(child, 3000);
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const init = await post(
        url,
        headersFor(undefined),
        JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'capnode-bench', version: '0' } } }),
      );
      const session = init.headers.get('mcp-session-id');
      if (init.status === 200 && session) {
        const headers = headersFor(undefined, { 'mcp-session-id': session });
        await post(url, headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
        return { url, headers, child, stop };
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`supergateway did not answer initialize: ${stderr.slice(-500)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** p50 of sequential calls with a bare SDK v2 client straight to the reference stdio server: the stdio hop's own floor. */
async function bareStdioP50(calls) {
  const { Client } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const client = new Client({ name: 'capnode-bench', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(benchDir, 'fixtures/stdioSdk.mjs')], stderr: 'ignore' }));
  try {
    const samples = [];
    for (let i = 0; i < calls + 200; i += 1) {
      const started = performance.now();
      await client.callTool({ name: 'bench.echo', arguments: { text: TEXT } });
      if (i >= 200) samples.push(performance.now() - started);
    }
    return median(samples);
  } finally {
    await client.close();
  }
}

export async function benchImported({ durationSec = 2, warmupSec = 1, rounds = 3, log = console.log } = {}) {
  if (!existsSync(join(rootDir, 'packages/host/dist/index.js'))) return { skipped: 'imported: SKIP, packages/host/dist missing; run pnpm build first' };
  const loadgen = startLoadgen();
  const host = await startChild(join(benchDir, 'servers/hostImported.mjs'));
  let gateway;
  try {
    const { url, token, imported } = host.info;
    const headers = headersFor(token);
    await probeCall(url, headers, 'bench.echo');
    await probeCall(url, headers, imported);
    gateway = await startSupergateway();
    await probeCall(gateway.url, gateway.headers, 'bench.echo');

    const job = (target, name, connections) => ({ url: target.url, headers: target.headers, body: callBody('[<id>]', name), idReplacement: true, connections });
    const capnode = { url, headers };
    const latency = { builtin: [], imported: [], ratios: [], stdio: [], overFloor: [] };
    const throughput = { capnode: [], supergateway: [], ratios: [] };
    for (let round = 0; round < rounds; round += 1) {
      const pair = {};
      for (const [key, name] of round % 2 === 0 ? [['builtin', 'bench.echo'], ['imported', imported]] : [['imported', imported], ['builtin', 'bench.echo']]) {
        const spec = job(capnode, name, 1);
        await loadgen.run({ ...spec, durationSec: round === 0 ? warmupSec : 0.5, discard: true });
        pair[key] = await loadgen.run({ ...spec, durationSec });
      }
      latency.builtin.push(pair.builtin.p50Ms);
      latency.imported.push(pair.imported.p50Ms);
      latency.ratios.push(pair.imported.p50Ms / pair.builtin.p50Ms);
      const stdio = await bareStdioP50(1000);
      latency.stdio.push(stdio);
      latency.overFloor.push(pair.imported.p50Ms / (pair.builtin.p50Ms + stdio));

      const side = {};
      for (const [key, spec] of round % 2 === 0 ? [['capnode', job(capnode, imported, 8)], ['supergateway', job(gateway, 'bench.echo', 8)]] : [['supergateway', job(gateway, 'bench.echo', 8)], ['capnode', job(capnode, imported, 8)]]) {
        await loadgen.run({ ...spec, durationSec: round === 0 ? warmupSec : 0.5, discard: true });
        side[key] = await loadgen.run({ ...spec, durationSec });
        if (side[key].non2xx || side[key].errors) log(`note: ${key} @8: status ${JSON.stringify(side[key].statusCodes)}, errors ${side[key].errors}`);
      }
      throughput.capnode.push(side.capnode.requestsPerSec);
      throughput.supergateway.push(side.supergateway.requestsPerSec);
      throughput.ratios.push(side.capnode.requestsPerSec / side.supergateway.requestsPerSec);
    }
    const result = {
      imported,
      latency: { builtinP50Ms: median(latency.builtin), importedP50Ms: median(latency.imported), ratio: median(latency.ratios), stdioFloorP50Ms: median(latency.stdio) },
      throughput: { capnodeRps: median(throughput.capnode), supergatewayRps: median(throughput.supergateway), ratio: median(throughput.ratios) },
    };
    log(
      `latency @1 conn: built-in bench.echo p50 ${result.latency.builtinP50Ms.toFixed(2)} ms, imported ${imported} p50 ${result.latency.importedP50Ms.toFixed(2)} ms, ratio ${result.latency.ratio.toFixed(3)} (informational)`,
    );
    const floor = result.latency.builtinP50Ms + result.latency.stdioFloorP50Ms;
    result.latency.floorP50Ms = floor;
    result.latency.overFloor = median(latency.overFloor);
    log(
      `  the stdio hop alone (bare SDK v2 client -> same server, sequential) p50 ${result.latency.stdioFloorP50Ms.toFixed(2)} ms; built-in + stdio hop = ${floor.toFixed(2)} ms; imported / (built-in + stdio hop) ${result.latency.overFloor.toFixed(3)} (median of per-round ratios; target <= 1.1)`,
    );
    log(
      `throughput @8 conns: capnode imported ${Math.round(result.throughput.capnodeRps)} req/s, supergateway (same stdio server, stateful Streamable HTTP) ${Math.round(result.throughput.supergatewayRps)} req/s, ratio ${result.throughput.ratio.toFixed(3)} (target >= 1)`,
    );
    return result;
  } finally {
    loadgen.stop();
    await gateway?.stop();
    await host.stop();
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const results = await benchImported();
  if (results.skipped) console.log(results.skipped);
}
