// screen.snapshot through MCP HTTP (issue 11): p50 of a 1920×1080 PNG from a host with the capability
// pack, against the fastest platform screenshot program run once (a fresh process per shot) on the same
// Xvfb display in the same run: ffmpeg x11grab (one PNG frame), and xwd, ImageMagick import, scrot and
// maim when installed. Rounds interleave the host and the programs, so load affects both alike.
// Run as `node bench/screen.mjs --host` it is the host child (prints READY {url, token}).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callTool, firstMissingBuild, hasProgram, latencyStats, serveBenchHost, startXvfb } from './lib/hostBench.mjs';
import { median, startChild } from './lib/util.mjs';

const WIDTH = 1920;
const HEIGHT = 1080;

/** The host child: a real host (createHost) with the pack's screen capability on `DISPLAY`. */
const runHost = () => serveBenchHost({ name: 'screen', consent: ['screen'], makeCapabilities: (pack) => [pack.createScreenCapability({ notify: false })] });

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
  return programs.filter((entry) => hasProgram(entry.program) && spawnSync(entry.program, entry.args, { env: { ...process.env, ...entry.env }, stdio: 'ignore', timeout: 20_000 }).status === 0);
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
  const { elapsed, text } = await callTool(url, token, 'screen.snapshot', { format: 'png' });
  if (!text.includes(`"width":${WIDTH}`)) throw new Error(`screen.snapshot: not a ${WIDTH}-wide frame: ${text.slice(0, 300)}`);
  return elapsed;
}

/**
 * Measures screen.snapshot (PNG, 1920×1080, MCP HTTP, one call at a time) against each installed
 * screenshot program; `ratio` = capnode p50 / fastest program p50 (target ≤ 1).
 */
export async function benchScreen({ shots = 60, log = () => undefined } = {}) {
  const missing = ['Xvfb', 'xsetroot', 'ffmpeg'].filter((program) => !hasProgram(program));
  if (missing.length) return { skipped: `screen: SKIP, not installed: ${missing.join(', ')} (Debian: xvfb x11-xserver-utils ffmpeg)` };
  const unbuilt = firstMissingBuild();
  if (unbuilt) return { skipped: `screen: SKIP, ${unbuilt} missing (pnpm build)` };
  const xvfb = await startXvfb({ width: WIDTH, height: HEIGHT, patterned: true });
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
    const programStats = programs.map((entry) => ({ name: entry.name, ...latencyStats(references.get(entry.name)) }));
    const fastest = programStats.reduce((best, entry) => (best === undefined || entry.p50Ms < best.p50Ms ? entry : best), undefined);
    const own = latencyStats(capnode);
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
