// What the benches that measure a real host over MCP HTTP share: the host child, an Xvfb display,
// one tools/call, and latency stats.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dists, missingDists, percentile, stopProcess } from './util.mjs';

/** True when `program` is on PATH. */
export const hasProgram = (program) => spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;

/** The first build output a host bench needs that is missing, for a "SKIP … (pnpm build)" line. */
export const firstMissingBuild = () => missingDists('host', 'pack')[0];

/**
 * The body of a bench's host child: a real host (`createHost` from the built package) in a fresh
 * home with `consent` allowed and the capabilities `makeCapabilities(pack, home)` returns; prints
 * `READY {url, token}` and closes (then `onClose`, then exits) on SIGTERM or when stdin ends.
 */
export async function serveBenchHost({ name, consent, makeCapabilities, onClose = async () => {} }) {
  const { createHost } = await import(dists.host);
  const pack = await import(dists.pack);
  const home = mkdtempSync(join(tmpdir(), `capnode-bench-${name}-`));
  // The consents the bench needs (all are off by default), as a user who lets an agent do this has them.
  writeFileSync(join(home, 'settings.json'), `${JSON.stringify({ consent: Object.fromEntries(consent.map((category) => [category, 'allow'])) })}\n`, { mode: 0o600 });
  const capabilities = makeCapabilities(pack, home);
  const host = createHost({ home, port: 0, builtinPlugins: false, capabilities, onLog: () => undefined });
  const status = await host.start();
  const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
  const stop = async () => {
    await host.close();
    await onClose(capabilities);
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
  console.log(`READY ${JSON.stringify({ url: status.mcp.url, token })}`);
}

/**
 * Starts Xvfb on a free display `width`×`height`; `patterned` paints the root with a pattern so image
 * encoders have real work (a solid colour compresses to nothing). `stop()` ends it.
 */
export async function startXvfb({ width, height, patterned = false }) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const number = 400 + Math.floor(Math.random() * 500);
    if (existsSync(`/tmp/.X11-unix/X${number}`) || existsSync(`/tmp/.X${number}-lock`)) continue;
    const display = `:${number}`;
    const child = spawn('Xvfb', [display, '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp', '-noreset'], { stdio: 'ignore' });
    let exited = false;
    child.once('exit', () => (exited = true));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline && spawnSync('xsetroot', ['-display', display, '-solid', 'black'], { stdio: 'ignore' }).status !== 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (exited) continue;
    if (patterned) spawnSync('xsetroot', ['-display', display, '-mod', '5', '7', '-fg', '#336699', '-bg', '#ffcc33'], { stdio: 'ignore' });
    return { display, stop: () => stopProcess(child, 3000) };
  }
  throw new Error('Xvfb did not start');
}

/** One sessionless 2025-11-25 `tools/call` over MCP HTTP; throws on an HTTP or tool error. `elapsed` in ms. */
export async function callTool(url, token, name, args) {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200 || text.includes('"isError":true')) throw new Error(`${name}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return { elapsed, text };
}

/** p50, p90 and min of latency samples in ms. */
export function latencyStats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90), minMs: sorted[0] };
}
