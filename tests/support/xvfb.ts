import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './poll.js';

/** A running Xvfb server: its display name and how to paint it; `close()` kills it. */
export interface Xvfb extends AsyncDisposable {
  /** `:<n>`, for DISPLAY. */
  readonly display: string;
  readonly width: number;
  readonly height: number;
  /** Environment with DISPLAY set, and XAUTHORITY only when the server checks a cookie. */
  readonly env: NodeJS.ProcessEnv;
  /** Paints the root window one colour (`xsetroot -solid`), e.g. `#ff8000`. */
  paint(colour: string): void;
  /** Hides the pointer: a blank root cursor (`xsetroot -cursor` with an empty bitmap). */
  hidePointer(): void;
  close(): Promise<void>;
}

export interface StartXvfbOptions {
  /** Default 1920. */
  readonly width?: number;
  /** Default 1080. */
  readonly height?: number;
  /** Colour depth; default 24. */
  readonly depth?: 8 | 16 | 24;
  /** An Xauthority file the server checks (`-auth`): only clients presenting its cookie connect. */
  readonly authFile?: string;
}

/** Whether Xvfb and xsetroot are installed (tests skip with a reason otherwise). */
export function hasXvfb(): boolean {
  return spawnSync('sh', ['-c', 'command -v Xvfb && command -v xsetroot'], { stdio: 'ignore' }).status === 0;
}

function freeDisplayNumber(): number {
  for (let n = 90 + Math.floor(Math.random() * 300); n < 1000; n++) {
    if (!existsSync(`/tmp/.X11-unix/X${n}`) && !existsSync(`/tmp/.X${n}-lock`)) return n;
  }
  throw new Error('no free X display number');
}

/**
 * Starts Xvfb on a free display number with one screen (`-screen 0 WxHx24` by default), waits until it
 * accepts connections (xsetroot succeeds), and returns it. `await using` kills it.
 */
export async function startXvfb(options: StartXvfbOptions = {}): Promise<Xvfb> {
  const width = options.width ?? 1920;
  const height = options.height ?? 1080;
  let child: ChildProcess | undefined;
  let display = '';
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    const number = freeDisplayNumber();
    display = `:${number}`;
    const candidate = spawn('Xvfb', [display, '-screen', '0', `${width}x${height}x${options.depth ?? 24}`, '-nolisten', 'tcp', '-noreset', ...(options.authFile ? ['-auth', options.authFile] : [])], { stdio: 'ignore' });
    let exited = false;
    candidate.once('exit', () => (exited = true));
    candidate.once('error', () => (exited = true));
    await eventually(() => existsSync(`/tmp/.X11-unix/X${number}`) || exited, { what: `Xvfb on ${display}`, timeoutMs: 15_000 });
    if (exited) continue; // Lost a race for the display number: try another.
    child = candidate;
  }
  if (!child) throw new Error('Xvfb did not start');
  const env: NodeJS.ProcessEnv = { ...process.env, DISPLAY: display };
  if (options.authFile) env.XAUTHORITY = options.authFile;
  else delete env.XAUTHORITY;
  const run = (args: string[]) => {
    const result = spawnSync('xsetroot', ['-display', display, ...args], { encoding: 'utf8', env });
    if (result.status !== 0) throw new Error(`xsetroot ${args.join(' ')} failed: ${result.stderr}`);
  };
  await eventually(() => spawnSync('xsetroot', ['-display', display, '-solid', 'black'], { env }).status === 0, { what: `Xvfb ${display} to accept clients`, timeoutMs: 15_000 });
  const running = child;
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      if (running.exitCode !== null || running.signalCode !== null) return resolve();
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
      setTimeout(() => running.kill('SIGKILL'), 3_000).unref();
    }));
  return {
    display,
    width,
    height,
    env,
    paint: (colour) => run(['-solid', colour]),
    hidePointer() {
      const dir = mkdtempSync(join(tmpdir(), 'capnode-xbm-'));
      try {
        const file = join(dir, 'blank.xbm');
        // A 1×1 cursor whose mask is empty: nothing is drawn.
        writeFileSync(file, '#define blank_width 1\n#define blank_height 1\nstatic unsigned char blank_bits[] = { 0x00 };\n');
        run(['-cursor', file, file]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
