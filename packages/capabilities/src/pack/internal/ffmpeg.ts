import { spawn } from 'node:child_process';
import type { Availability } from '../../contract.js';
import { CapabilityError } from '../../errors.js';
import { findExecutable } from '../../internal/which.js';

/** What to install for ffmpeg, per platform. */
export function ffmpegInstallHint(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'ffmpeg (brew install ffmpeg)';
  if (platform === 'win32') return 'ffmpeg (winget install Gyan.FFmpeg) on PATH';
  return 'ffmpeg (Debian/Ubuntu: apt install ffmpeg)';
}

/** A PATH lookup only (no process is run): ffmpeg is there, or what to install. */
export async function probeFfmpeg(options: { readonly env?: NodeJS.ProcessEnv; readonly platform?: NodeJS.Platform }): Promise<Availability> {
  if (await findExecutable('ffmpeg', { env: options.env ?? process.env })) return { available: true };
  return { available: false, install: ffmpegInstallHint(options.platform ?? process.platform) };
}

/**
 * The ffmpeg program on `env`'s PATH.
 *
 * @throws CapabilityError `unavailable` ("unavailable here: install ffmpeg …") when there is none.
 */
export async function requireFfmpeg(env: NodeJS.ProcessEnv, program = 'ffmpeg'): Promise<string> {
  const file = await findExecutable(program, { env });
  if (!file) throw new CapabilityError('unavailable', `unavailable here: install ${program === 'ffmpeg' ? ffmpegInstallHint() : program}.`);
  return file;
}

export interface RunMediaOptions {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Written to the program's stdin, then stdin is closed. Absent: stdin is closed at once. */
  readonly input?: Buffer;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Bytes of stdout kept; more fails the run with `payload_too_large`. */
  readonly maxOutputBytes: number;
  /** What the program does, for messages ("the screen recording"). */
  readonly what: string;
  /** Appended to the `payload_too_large` message: how the caller can shrink the output. */
  readonly shrinkHint?: string;
  /** Resolve whatever the exit code (device listings exit non-zero by design). */
  readonly ignoreExitCode?: boolean;
  /** How long a stopped program has after SIGTERM before SIGKILL. Default 2 s. */
  readonly killGraceMs?: number;
}

export interface MediaRunResult {
  readonly stdout: Buffer;
  readonly stderr: string;
}

const STDERR_KEEP = 16 * 1024;

/**
 * Runs a media program (ffmpeg, screencapture, PowerShell) without a shell, collecting binary
 * stdout. On cancellation or deadline its process group gets SIGTERM, then SIGKILL after a grace
 * period, and the promise settles only once the process has exited, so nothing is left running.
 *
 * @throws CapabilityError `cancelled`, `timeout`, `payload_too_large`, or `failed` with the last stderr line.
 */
export function runMedia(options: RunMediaOptions): Promise<MediaRunResult> {
  return new Promise<MediaRunResult>((resolve, reject) => {
    if (options.signal.aborted) return reject(new CapabilityError('cancelled', `${capitalize(options.what)} was cancelled.`));
    const windows = process.platform === 'win32';
    const child = spawn(options.file, options.args as string[], { env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: !windows, windowsHide: true });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let stopReason: CapabilityError | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (reason: CapabilityError) => {
      if (stopReason) return;
      stopReason = reason;
      signalTree(child.pid, 'SIGTERM', windows, () => child.kill());
      killTimer = setTimeout(() => signalTree(child.pid, 'SIGKILL', windows, () => child.kill('SIGKILL')), options.killGraceMs ?? 2_000);
    };
    const deadline = setTimeout(() => stop(new CapabilityError('timeout', `${capitalize(options.what)} did not finish within ${Math.round(options.timeoutMs / 1000)} s.`)), options.timeoutMs);
    const onAbort = () => stop(new CapabilityError('cancelled', `${capitalize(options.what)} was cancelled.`));
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > options.maxOutputBytes) {
        const hint = options.shrinkHint ? `; ${options.shrinkHint}` : '';
        stop(new CapabilityError('payload_too_large', `${capitalize(options.what)} is larger than ${options.maxOutputBytes - 1} bytes${hint}.`, { data: { limit: options.maxOutputBytes - 1 } }));
        return;
      }
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    child.stdin.on('error', () => undefined); // The program may exit before reading all input.
    child.stdin.end(options.input);
    child.on('error', (error: NodeJS.ErrnoException) => {
      cleanup();
      reject(new CapabilityError('failed', `Could not start ${options.file}: ${error.code === 'ENOENT' ? 'not found' : error.message}.`, { cause: error }));
    });
    const cleanup = () => {
      clearTimeout(deadline);
      clearTimeout(killTimer);
      options.signal.removeEventListener('abort', onAbort);
    };
    child.on('close', (code, signal) => {
      cleanup();
      if (stopReason) return reject(stopReason);
      if (code !== 0 && !options.ignoreExitCode) {
        const line = lastLine(stderr) || `exit ${code ?? signal}`;
        return reject(new CapabilityError('failed', `${capitalize(options.what)} failed: ${line}`));
      }
      resolve({ stdout: Buffer.concat(out), stderr });
    });
  });
}

function signalTree(pid: number | undefined, signal: NodeJS.Signals, windows: boolean, fallback: () => void): void {
  if (pid === undefined) return;
  if (windows) return fallback();
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      fallback();
    } catch {
      // Already gone.
    }
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The last non-empty line of a program's stderr, trimmed to 300 characters. */
export function lastLine(stderr: string): string {
  const lines = stderr.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

/** Input formats and devices this ffmpeg was built with (`ffmpeg -devices`), cached per program path once read. */
const deviceCache = new Map<string, Promise<Set<string>>>();

/**
 * Whether this ffmpeg has a given input device (`x11grab`, `pulse`, `v4l2`, `avfoundation`, `dshow`, `gdigrab`).
 * The listing runs on its own deadline, not the caller's signal, because concurrent callers share it;
 * a listing that failed is not cached, so one cancelled or slow call does not hide the device for good.
 */
export async function ffmpegHasDevice(file: string, device: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<boolean> {
  let known = deviceCache.get(file);
  if (!known) {
    known = runMedia({ file, args: ['-hide_banner', '-devices'], env, signal: new AbortController().signal, timeoutMs: 10_000, maxOutputBytes: 1 << 20, what: 'ffmpeg -devices' }).then(
      (result) => parseFfmpegDevices(result.stdout.toString('utf8')),
      () => {
        deviceCache.delete(file);
        return new Set<string>();
      },
    );
    deviceCache.set(file, known);
  }
  const devices = await known;
  if (signal.aborted) throw new CapabilityError('cancelled', 'The command was cancelled.');
  return devices.has(device);
}

/** Names of the demuxing devices in `ffmpeg -devices` output (lines like ` D  x11grab  X11 screen capture`). */
export function parseFfmpegDevices(output: string): Set<string> {
  const names = new Set<string>();
  for (const line of output.split('\n')) {
    const match = /^ (D)[E ] (\S+)/.exec(line);
    if (match?.[2] && match[2] !== '=') for (const name of match[2].split(',')) names.add(name);
  }
  return names;
}
