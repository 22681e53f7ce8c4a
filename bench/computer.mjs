// computer.act click round trip through MCP HTTP (issue 16): p50 of a left_click from a host with the
// pack's screen and computer capabilities (XTEST on the display socket; the call returns once the X
// server has handled the input), against `xdotool mousemove X Y click 1` run once per click (a fresh
// process, as an agent shelling out would) on the same Xvfb display in the same run. Rounds
// interleave the two, so load affects both alike. `node bench/computer.mjs --host` is the host child.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, percentile, rootDir, startChild } from './lib/util.mjs';

const WIDTH = 1280;
const HEIGHT = 800;

const has = (program) => spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;

/** The host child: a real host (createHost) with the pack's screen and computer capabilities on `DISPLAY`. */
async function runHost() {
  const { createHost } = await import(join(rootDir, 'packages/host/dist/index.js'));
  const { createScreenCapability, createComputerCapability } = await import(join(rootDir, 'packages/capabilities/dist/pack.js'));
  const home = mkdtempSync(join(tmpdir(), 'capnode-bench-computer-'));
  // Both consents on (off by default), as a user who lets an agent drive the desktop has them.
  writeFileSync(join(home, 'settings.json'), `${JSON.stringify({ consent: { screen: 'allow', computer: 'allow' } })}\n`, { mode: 0o600 });
  const capabilities = [createScreenCapability({ notify: false }), createComputerCapability({ notify: false })];
  const host = createHost({ home, port: 0, builtinPlugins: false, capabilities, onLog: () => undefined });
  const status = await host.start();
  const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
  const stop = async () => {
    await host.close();
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
  console.log(`READY ${JSON.stringify({ url: status.mcp.url, token })}`);
}

async function startXvfb() {
  for (let attempt = 0; attempt < 5; attempt++) {
    const number = 400 + Math.floor(Math.random() * 500);
    if (existsSync(`/tmp/.X11-unix/X${number}`) || existsSync(`/tmp/.X${number}-lock`)) continue;
    const display = `:${number}`;
    const child = spawn('Xvfb', [display, '-screen', '0', `${WIDTH}x${HEIGHT}x24`, '-nolisten', 'tcp', '-noreset'], { stdio: 'ignore' });
    let exited = false;
    child.once('exit', () => (exited = true));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline && spawnSync('xsetroot', ['-display', display, '-solid', 'black'], { stdio: 'ignore' }).status !== 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (exited) continue;
    const stop = () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      });
    return { display, stop };
  }
  throw new Error('Xvfb did not start');
}

async function call(url, token, name, args) {
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

function xdotoolClick(display, x, y) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('xdotool', ['mousemove', String(x), String(y), 'click', '1'], { env: { ...process.env, DISPLAY: display }, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`xdotool exited ${code}`))));
  });
}

const stats = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90), minMs: sorted[0] };
};

/**
 * Measures computer.act left_click (MCP HTTP, one call at a time, a frame from one screen.snapshot)
 * against an `xdotool` process per click; `ratio` = capnode p50 / xdotool p50 (target ≤ 1).
 */
export async function benchComputer({ clicks = 100, log = () => undefined } = {}) {
  const missing = ['Xvfb', 'xsetroot', 'xdotool'].filter((program) => !has(program));
  if (missing.length) return { skipped: `computer: SKIP, not installed: ${missing.join(', ')} (Debian: xvfb x11-xserver-utils xdotool)` };
  for (const file of ['packages/host/dist/index.js', 'packages/capabilities/dist/pack.js']) {
    if (!existsSync(join(rootDir, file))) return { skipped: `computer: SKIP, ${file} missing (pnpm build)` };
  }
  const xvfb = await startXvfb();
  let host;
  try {
    host = await startChild(fileURLToPath(import.meta.url), { args: ['--host'], env: { DISPLAY: xvfb.display, XAUTHORITY: '' } });
    const { url, token } = host.info;
    const shot = await call(url, token, 'screen.snapshot', { format: 'jpeg', maxWidth: 640 });
    const displayFrameId = /"displayFrameId":\s*"([^"]+)"/.exec(shot.text)?.[1];
    if (!displayFrameId) throw new Error('screen.snapshot returned no displayFrameId');
    log(`display ${xvfb.display} ${WIDTH}x${HEIGHT}; ${clicks} interleaved clicks each`);
    const click = (i) => call(url, token, 'computer.act', { action: 'left_click', x: 100 + (i % 50), y: 100, displayFrameId, refWidth: 640 });
    for (let i = 0; i < 5; i++) await click(i); // warm-up: JIT, first connection, XTEST setup
    for (let i = 0; i < 3; i++) await xdotoolClick(xvfb.display, 200, 200);
    const capnode = [];
    const xdotool = [];
    for (let i = 0; i < clicks; i++) {
      capnode.push((await click(i)).elapsed);
      xdotool.push(await xdotoolClick(xvfb.display, 200 + (i % 50) * 2, 200));
    }
    const own = stats(capnode);
    const reference = stats(xdotool);
    return { display: `${WIDTH}x${HEIGHT}`, capnode: own, xdotool: reference, ratio: own.p50Ms / reference.p50Ms, medianMs: median(capnode) };
  } finally {
    await host?.stop();
    await xvfb.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--host')) await runHost();
  else console.log(JSON.stringify(await benchComputer({ log: (line) => console.log(line) }), null, 2));
}
