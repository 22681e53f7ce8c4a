import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A running Xvfb server on a display number it chose itself; `close()` stops it. */
export interface XServer extends AsyncDisposable {
  /** `:N`, a free number picked at random (see `freeDisplayNumber`). */
  readonly display: string;
  readonly width: number;
  readonly height: number;
  /** `process.env` with DISPLAY set, XAUTHORITY only when the server checks a cookie, and no WAYLAND_DISPLAY. */
  readonly env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export interface XServerOptions {
  /** Default 800. */
  readonly width?: number;
  /** Default 600. */
  readonly height?: number;
  /** Colour depth; default 24. */
  readonly depth?: 8 | 16 | 24;
  /** An Xauthority file the server checks (`-auth`): only clients presenting its cookie connect. */
  readonly authFile?: string;
}

/** A private X display (Xvfb) and D-Bus session bus for tests of desktop code. */
export interface TestDisplay extends XServer {
  readonly busAddress: string;
  /** The X server's env plus DBUS_SESSION_BUS_ADDRESS, a private TMPDIR and NO_AT_BRIDGE (no accessibility bus activation). */
  readonly env: NodeJS.ProcessEnv;
}

const TOOLS = [
  ['Xvfb', 'xvfb'],
  ['dbus-daemon', 'dbus-daemon'],
  ['busctl', 'systemd'],
] as const;

/** The Debian packages missing for {@link startTestDisplay}, or `undefined` when all tools are present. */
export function missingDisplayTools(): string | undefined {
  const missing = TOOLS.filter(([tool]) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0).map(([, pkg]) => pkg);
  return missing.length > 0 ? `missing: ${missing.join(', ')} (apt install ${missing.join(' ')})` : undefined;
}

function firstLine(stream: NodeJS.ReadableStream, what: string, child: ChildProcess, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: stream });
    const timer = setTimeout(() => done(new Error(`${what} did not start within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null) => done(new Error(`${what} exited (code ${code}) before it was ready`));
    function done(error?: Error, line?: string) {
      clearTimeout(timer);
      lines.close();
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(line!);
    }
    lines.once('line', (line) => done(undefined, line.trim()));
    child.once('exit', onExit);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  // Never started (spawn failed), or already gone.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

/**
 * A display number no X server holds: random in 100–999 so suites (and other users of this machine)
 * starting at once rarely pick the same one. Xvfb's own `-displayfd` search starts at 0 for
 * everyone, and two servers probing one number at the same moment can unlink each other's socket.
 */
function freeDisplayNumber(): number {
  for (let attempt = 0; attempt < 100; attempt++) {
    const n = 100 + Math.floor(Math.random() * 900);
    if (!existsSync(`/tmp/.X11-unix/X${n}`) && !existsSync(`/tmp/.X${n}-lock`)) return n;
  }
  throw new Error('no free X display number in 100–999');
}

/** Xvfb on `:number`, resolved once it accepts connections (it writes the number to fd 3 then). */
async function spawnXvfb(number: number, args: readonly string[]): Promise<ChildProcess> {
  const xvfb = spawn('Xvfb', [`:${number}`, '-displayfd', '3', ...args], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  const failed = new Promise<never>((_resolve, reject) => xvfb.once('error', (error) => reject(new Error(`cannot run Xvfb: ${error.message} (apt install xvfb)`))));
  failed.catch(() => undefined);
  try {
    await Promise.race([firstLine(xvfb.stdio[3] as NodeJS.ReadableStream, `Xvfb :${number}`, xvfb, 15_000), failed]);
    return xvfb;
  } catch (error) {
    await stop(xvfb);
    throw error;
  }
}

/**
 * Starts Xvfb (`-screen 0 WxHxD`, no TCP, no reset when the last client leaves, so what a test paints
 * stays) on a free display and resolves once it accepts connections: the one way tests start an X server.
 */
export async function startXServer(options: XServerOptions = {}): Promise<XServer> {
  const width = options.width ?? 800;
  const height = options.height ?? 600;
  const args = ['-screen', '0', `${width}x${height}x${options.depth ?? 24}`, '-nolisten', 'tcp', '-noreset', ...(options.authFile ? ['-auth', options.authFile] : [])];
  let xvfb: ChildProcess | undefined;
  let number = 0;
  for (let attempt = 1; !xvfb; attempt++) {
    number = freeDisplayNumber();
    try {
      xvfb = await spawnXvfb(number, args);
    } catch (error) {
      // Lost a race for the number (the server exits at once): another number, a few times.
      if (attempt >= 5 || /cannot run Xvfb|did not start/.test((error as Error).message)) throw error;
    }
  }
  const display = `:${number}`;
  const env: NodeJS.ProcessEnv = { ...process.env, DISPLAY: display };
  delete env.WAYLAND_DISPLAY;
  if (options.authFile) env.XAUTHORITY = options.authFile;
  else delete env.XAUTHORITY;
  const running = xvfb;
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= stop(running));
  return { display, width, height, env, close, [Symbol.asyncDispose]: close };
}

/** Starts an X server ({@link startXServer}) and a D-Bus session bus in a temporary directory; names the Debian packages when a tool is missing. */
export async function startTestDisplay(options: XServerOptions = {}): Promise<TestDisplay> {
  const missing = missingDisplayTools();
  if (missing) throw new Error(`cannot start a test display: ${missing}`);
  const dir = mkdtempSync(join(tmpdir(), 'capnode-display-'));
  const bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1', `--address=unix:path=${join(dir, 'bus')}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const starting = startXServer(options);
  try {
    const [x, busAddress] = await Promise.all([starting, firstLine(bus.stdout!, 'dbus-daemon', bus)]);
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const env: NodeJS.ProcessEnv = { ...x.env, DBUS_SESSION_BUS_ADDRESS: busAddress, NO_AT_BRIDGE: '1', TMPDIR: tmp };
    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= Promise.all([stop(bus), x.close()]).then(() => rmSync(dir, { recursive: true, force: true }));
      return closing;
    };
    return { display: x.display, width: x.width, height: x.height, busAddress, env, close, [Symbol.asyncDispose]: close };
  } catch (error) {
    await Promise.all([stop(bus), starting.then((x) => x.close(), () => undefined)]);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
