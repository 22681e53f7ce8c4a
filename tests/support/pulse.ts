import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './poll.js';

/** A private PulseAudio server whose default source is the monitor of a null sink: a "microphone" fed by playback. */
export interface TestPulse extends AsyncDisposable {
  /** Environment for clients (ffmpeg, espeak-ng, paplay): `PULSE_SERVER` pointing at this server. */
  readonly env: Record<string, string>;
  /** Plays a sound file into the null sink, i.e. "speaks into the microphone"; resolves when done. */
  play(file: string): Promise<void>;
  /** Resolves once a client records from the server (a source output exists), so nothing played is missed. */
  recording(): Promise<void>;
}

/**
 * Starts `pulseaudio` in a temporary runtime directory with one null sink (`capnode_mic`) as default
 * sink and its `.monitor` as default source, on a private unix socket (no TCP, anonymous auth).
 */
export async function startTestPulse(): Promise<TestPulse> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-pulse-')));
  const socket = join(dir, 'native');
  const env = { PULSE_SERVER: `unix:${socket}` };
  const child: ChildProcess = spawn(
    'pulseaudio',
    [
      '-n',
      '--daemonize=no',
      '--exit-idle-time=-1',
      '--disable-shm=yes',
      '--use-pid-file=no',
      '--log-target=stderr',
      '-L',
      `module-native-protocol-unix auth-anonymous=1 socket=${socket}`,
      '-L',
      'module-null-sink sink_name=capnode_mic',
      '-L',
      'module-default-device-restore',
    ],
    { env: { ...process.env, HOME: dir, XDG_RUNTIME_DIR: dir, XDG_CONFIG_HOME: dir }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString('utf8')).slice(-4000)));
  const run = (file: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const tool = spawn(file, args, { env: { ...process.env, ...env }, stdio: 'ignore' });
      tool.once('error', reject);
      tool.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}`))));
    });
  const dispose = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      // A pulseaudio stuck in shutdown must not hang the test run: SIGKILL after a grace period.
      const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(force);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(() => existsSync(socket) || child.exitCode !== null, { what: `pulseaudio's socket (${log.slice(-300)})` });
    if (child.exitCode !== null) throw new Error(`pulseaudio exited: ${log.slice(-500)}`);
    await run('pactl', ['set-default-sink', 'capnode_mic']);
    await run('pactl', ['set-default-source', 'capnode_mic.monitor']);
  } catch (error) {
    await dispose();
    throw error;
  }
  const sourceOutputs = () =>
    new Promise<string>((resolve) => execFile('pactl', ['list', 'short', 'source-outputs'], { env: { ...process.env, ...env } }, (_error, stdout) => resolve(String(stdout ?? '').trim())));
  return {
    env,
    play: (file) => run('paplay', ['--device=capnode_mic', file]),
    recording: async () => {
      await eventually(sourceOutputs, { what: 'a recorder connected to the test PulseAudio server', intervalMs: 50 });
    },
    [Symbol.asyncDispose]: dispose,
  };
}
