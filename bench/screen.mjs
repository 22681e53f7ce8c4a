// screen.snapshot through MCP HTTP (issue 11): p50 of a 1920×1080 PNG from a host with the capability
// pack, against the fastest platform screenshot program run once (a fresh process per shot) on the same
// Xvfb display in the same run: ffmpeg x11grab (one PNG frame), and xwd, ImageMagick import, scrot and
// maim when installed. Rounds interleave the host and the programs, so load affects both alike.
// Run as `node bench/screen.mjs --host` it is the host child (prints READY {url, token}).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, percentile, rootDir, startChild } from './lib/util.mjs';

const WIDTH = 1920;
const HEIGHT = 1080;

const has = (program) => spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;

/** The host child: a real host (createHost) with the pack's screen capability on `DISPLAY`. */
async function runHost() {
  const { createHost } = await import(join(rootDir, 'packages/host/dist/index.js'));
  const { createScreenCapability } = await import(join(rootDir, 'packages/capabilities/dist/pack.js'));
  const home = mkdtempSync(join(tmpdir(), 'capnode-bench-screen-'));
  // Screen consent on (it is off by default), as a user who lets an agent take screenshots has it.
  writeFileSync(join(home, 'settings.json'), `${JSON.stringify({ consent: { screen: 'allow' } })}\n`, { mode: 0o600 });
  const host = createHost({ home, port: 0, builtinPlugins: false, capabilities: [createScreenCapability({ notify: false })], onLog: () => undefined });
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
    // A patterned screen, so encoders have real work (a solid colour compresses to nothing).
    spawnSync('xsetroot', ['-display', display, '-mod', '5', '7', '-fg', '#336699', '-bg', '#ffcc33'], { stdio: 'ignore' });
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

/** The screenshot programs installed here, each as a command writing one full-screen capture. */
function referencePrograms(display, dir) {
  const programs = [
    { name: 'ffmpeg x11grab → PNG', program: 'ffmpeg', args: ['-hide_banner', '-loglevel', 'error', '-f', 'x11grab', '-draw_mouse', '0', '-video_size', `${WIDTH}x${HEIGHT}`, '-i', display, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', '-y', join(dir, 'ffmpeg.png')] },
    { name: 'xwd -root (raw XWD)', program: 'xwd', args: ['-root', '-silent', '-display', display, '-out', join(dir, 'shot.xwd')] },
    { name: 'ImageMagick import → PNG', program: 'import', args: ['-display', display, '-window', 'root', join(dir, 'import.png')] },
    { name: 'scrot → PNG', program: 'scrot', args: ['-o', join(dir, 'scrot.png')], env: { DISPLAY: display } },
    { name: 'maim → PNG', program: 'maim', args: [join(dir, 'maim.png')], env: { DISPLAY: display } },
  ];
  // /usr/local/bin/convert-style stand-ins are not ImageMagick: keep only programs that really capture.
  return programs.filter((entry) => has(entry.program) && spawnSync(entry.program, entry.args, { env: { ...process.env, ...entry.env }, stdio: 'ignore', timeout: 20_000 }).status === 0);
}

function runOnce(entry) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(entry.program, entry.args, { env: { ...process.env, ...entry.env }, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${entry.name} exited ${code}`))));
  });
}

async function snapshotOnce(url, token) {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'screen.snapshot', arguments: { format: 'png' } } }),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200 || text.includes('"isError":true') || !text.includes(`"width":${WIDTH}`)) throw new Error(`screen.snapshot: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return elapsed;
}

const stats = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90), minMs: sorted[0] };
};

/**
 * Measures screen.snapshot (PNG, 1920×1080, MCP HTTP, one call at a time) against each installed
 * screenshot program; `ratio` = capnode p50 / fastest program p50 (target ≤ 1).
 */
export async function benchScreen({ shots = 60, log = () => undefined } = {}) {
  const missing = ['Xvfb', 'xsetroot', 'ffmpeg'].filter((program) => !has(program));
  if (missing.length) return { skipped: `screen: SKIP, not installed: ${missing.join(', ')} (Debian: xvfb x11-xserver-utils ffmpeg)` };
  for (const file of ['packages/host/dist/index.js', 'packages/capabilities/dist/pack.js']) {
    if (!existsSync(join(rootDir, file))) return { skipped: `screen: SKIP, ${file} missing (pnpm build)` };
  }
  const xvfb = await startXvfb();
  const dir = mkdtempSync(join(tmpdir(), 'capnode-bench-shots-'));
  let host;
  try {
    host = await startChild(fileURLToPath(import.meta.url), { args: ['--host'], env: { DISPLAY: xvfb.display, XAUTHORITY: '' } });
    const { url, token } = host.info;
    const programs = referencePrograms(xvfb.display, dir);
    log(`display ${xvfb.display} ${WIDTH}x${HEIGHT}, patterned; reference programs: ${programs.map((entry) => entry.name).join(', ') || 'none'}; ${shots} interleaved shots each`);
    for (let i = 0; i < 3; i++) await snapshotOnce(url, token); // warm-up: JIT, first connection
    const capnode = [];
    const references = new Map(programs.map((entry) => [entry.name, []]));
    // One shot each in turn, so a burst of load elsewhere on the machine hits all of them alike.
    for (let i = 0; i < shots; i++) {
      capnode.push(await snapshotOnce(url, token));
      for (const entry of programs) references.get(entry.name).push(await runOnce(entry));
    }
    const programStats = programs.map((entry) => ({ name: entry.name, ...stats(references.get(entry.name)) }));
    const fastest = programStats.reduce((best, entry) => (best === undefined || entry.p50Ms < best.p50Ms ? entry : best), undefined);
    const own = stats(capnode);
    return { display: `${WIDTH}x${HEIGHT}`, capnode: own, programs: programStats, fastest: fastest?.name, ratio: fastest ? own.p50Ms / fastest.p50Ms : NaN, medianMs: median(capnode) };
  } finally {
    await host?.stop();
    await xvfb.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--host')) await runHost();
  else console.log(JSON.stringify(await benchScreen({ log: (line) => console.log(line) }), null, 2));
}
