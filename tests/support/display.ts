import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A private X display (Xvfb) and D-Bus session bus for tests of desktop code. */
export interface TestDisplay extends AsyncDisposable {
  /** `:N`, chosen by Xvfb itself (`-displayfd`), so parallel suites never collide. */
  readonly display: string;
  readonly busAddress: string;
  /** `process.env` plus DISPLAY, DBUS_SESSION_BUS_ADDRESS, a private TMPDIR and NO_AT_BRIDGE (no accessibility bus activation). */
  readonly env: NodeJS.ProcessEnv;
  close(): Promise<void>;
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
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

/** Starts Xvfb on a free display and a D-Bus session bus in a temporary directory; names the Debian packages when a tool is missing. */
export async function startTestDisplay(): Promise<TestDisplay> {
  const missing = missingDisplayTools();
  if (missing) throw new Error(`cannot start a test display: ${missing}`);
  const dir = mkdtempSync(join(tmpdir(), 'capnode-display-'));
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '800x600x24'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  const bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1', `--address=unix:path=${join(dir, 'bus')}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const [number, busAddress] = await Promise.all([firstLine(xvfb.stdio[3] as NodeJS.ReadableStream, 'Xvfb', xvfb), firstLine(bus.stdout!, 'dbus-daemon', bus)]);
    const display = `:${number}`;
    const tmp = join(dir, 'tmp');
    spawnSync('mkdir', ['-p', tmp]);
    const env: NodeJS.ProcessEnv = { ...process.env, DISPLAY: display, DBUS_SESSION_BUS_ADDRESS: busAddress, NO_AT_BRIDGE: '1', TMPDIR: tmp };
    delete env.WAYLAND_DISPLAY;
    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= Promise.all([stop(bus), stop(xvfb)]).then(() => rmSync(dir, { recursive: true, force: true }));
      return closing;
    };
    return { display, busAddress, env, close, [Symbol.asyncDispose]: close };
  } catch (error) {
    await Promise.all([stop(bus), stop(xvfb)]);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
