import type { Availability } from '../../contract.js';
import { CapabilityError } from '../../errors.js';
import { findExecutable } from '../../internal/which.js';
import { runTool } from './voiceProcess.js';

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

/**
 * Runs a media program (ffmpeg, screencapture, PowerShell) without a shell through {@link runTool},
 * collecting binary stdout. On cancellation or deadline its process group gets SIGTERM, then SIGKILL
 * after a grace period, and the promise settles only once the process has exited, so nothing is left running.
 *
 * @throws CapabilityError `cancelled`, `timeout`, `payload_too_large`, or `failed` with the last stderr line.
 */
export async function runMedia(options: RunMediaOptions): Promise<MediaRunResult> {
  const what = capitalize(options.what);
  if (options.signal.aborted) throw new CapabilityError('cancelled', `${what} was cancelled.`);
  const result = await runTool({
    file: options.file,
    args: options.args,
    env: options.env,
    input: options.input,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    maxStdoutBytes: options.maxOutputBytes,
    killOnOverflow: true,
    killGraceMs: options.killGraceMs ?? 2_000,
    keepStderr: 'tail',
  });
  if (result.cancelled) throw new CapabilityError('cancelled', `${what} was cancelled.`);
  if (result.timedOut) throw new CapabilityError('timeout', `${what} did not finish within ${Math.round(options.timeoutMs / 1000)} s.`);
  if (result.truncated) {
    const hint = options.shrinkHint ? `; ${options.shrinkHint}` : '';
    throw new CapabilityError('payload_too_large', `${what} is larger than ${options.maxOutputBytes - 1} bytes${hint}.`, { data: { limit: options.maxOutputBytes - 1 } });
  }
  if (result.exitCode !== 0 && !options.ignoreExitCode) {
    throw new CapabilityError('failed', `${what} failed: ${lastLine(result.stderr) || `exit ${result.exitCode ?? result.signal}`}`);
  }
  return { stdout: result.stdout, stderr: result.stderr };
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
