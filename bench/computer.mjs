// computer.act click round trip through MCP HTTP (issue 16): p50 of a left_click from a host with the
// pack's screen and computer capabilities (XTEST on the display socket; the call returns once the X
// server has handled the input), against `xdotool mousemove X Y click 1` run once per click (a fresh
// process, as an agent shelling out would) on the same Xvfb display in the same run. Rounds
// interleave the two, so load affects both alike. `node bench/computer.mjs --host` is the host child.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { callTool, firstMissingBuild, hasProgram, latencyStats, serveBenchHost, startXvfb } from './lib/hostBench.mjs';
import { median, startChild } from './lib/util.mjs';

const WIDTH = 1280;
const HEIGHT = 800;

/** The host child: a real host (createHost) with the pack's screen and computer capabilities on `DISPLAY`. */
const runHost = () =>
  serveBenchHost({ name: 'computer', consent: ['screen', 'computer'], makeCapabilities: (pack) => [pack.createScreenCapability({ notify: false }), pack.createComputerCapability({ notify: false })] });

function xdotoolClick(display, x, y) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('xdotool', ['mousemove', String(x), String(y), 'click', '1'], { env: { ...process.env, DISPLAY: display }, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`xdotool exited ${code}`))));
  });
}

/**
 * Measures computer.act left_click (MCP HTTP, one call at a time, a frame from one screen.snapshot)
 * against an `xdotool` process per click; `ratio` = capnode p50 / xdotool p50 (target ≤ 1).
 */
export async function benchComputer({ clicks = 100, log = () => undefined } = {}) {
  const missing = ['Xvfb', 'xsetroot', 'xdotool'].filter((program) => !hasProgram(program));
  if (missing.length) return { skipped: `computer: SKIP, not installed: ${missing.join(', ')} (Debian: xvfb x11-xserver-utils xdotool)` };
  const unbuilt = firstMissingBuild();
  if (unbuilt) return { skipped: `computer: SKIP, ${unbuilt} missing (pnpm build)` };
  const xvfb = await startXvfb({ width: WIDTH, height: HEIGHT });
  let host;
  try {
    host = await startChild(fileURLToPath(import.meta.url), { args: ['--host'], env: { DISPLAY: xvfb.display, XAUTHORITY: '' } });
    const { url, token } = host.info;
    const shot = await callTool(url, token, 'screen.snapshot', { format: 'jpeg', maxWidth: 640 });
    const displayFrameId = /"displayFrameId":\s*"([^"]+)"/.exec(shot.text)?.[1];
    if (!displayFrameId) throw new Error('screen.snapshot returned no displayFrameId');
    log(`display ${xvfb.display} ${WIDTH}x${HEIGHT}; ${clicks} interleaved clicks each`);
    const click = (i) => callTool(url, token, 'computer.act', { action: 'left_click', x: 100 + (i % 50), y: 100, displayFrameId, refWidth: 640 });
    for (let i = 0; i < 5; i++) await click(i); // warm-up: JIT, first connection, XTEST setup
    for (let i = 0; i < 3; i++) await xdotoolClick(xvfb.display, 200, 200);
    const capnode = [];
    const xdotool = [];
    for (let i = 0; i < clicks; i++) {
      capnode.push((await click(i)).elapsed);
      xdotool.push(await xdotoolClick(xvfb.display, 200 + (i % 50) * 2, 200));
    }
    const own = latencyStats(capnode);
    const reference = latencyStats(xdotool);
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
