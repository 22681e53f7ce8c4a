import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CapabilityError } from '../errors.js';
import { MAX_TIMER_MS } from './timers.js';

export interface RunProcessOptions {
  /** Absolute program path, or the command line when `shell` is true. */
  readonly file: string;
  readonly args: readonly string[];
  /** Run `file` as a command line in the platform shell (`/bin/sh -c`, `cmd.exe /d /s /c`). */
  readonly shell?: boolean;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  /** Bytes kept per stream; the rest is counted and dropped. */
  readonly maxOutputBytes: number;
  readonly signal: AbortSignal;
  /** Called every `progressIntervalMs` while the process runs. */
  readonly onProgress?: (status: RunStatus) => void;
  readonly progressIntervalMs?: number;
  readonly platform?: NodeJS.Platform;
}

/** A running process's counters, for progress reports. */
export interface RunStatus {
  readonly elapsedMs: number;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
}

/** How a process ended. Output streams are decoded as UTF-8. */
export interface ProcessResult {
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly truncated: { readonly stdout: boolean; readonly stderr: boolean };
  /** Killed because `timeoutMs` passed. */
  readonly timedOut: boolean;
  /** Killed because `signal` aborted. */
  readonly cancelled: boolean;
  readonly durationMs: number;
}

/** How long to keep reading output after the process exited (a background child may hold the pipe). */
const EXIT_DRAIN_MS = 500;
/** How long to wait for the exit after a kill before giving up on it. */
const KILL_WAIT_MS = 5_000;

/** The marker appended to a stream that went over its limit. */
export function truncationMarker(omittedBytes: number): string {
  return `\n[output truncated: ${omittedBytes} bytes omitted]`;
}

class OutputBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }

  get truncated(): boolean {
    return this.total > this.kept;
  }

  text(): string {
    const data = Buffer.concat(this.chunks);
    if (!this.truncated) return data.toString('utf8');
    // Streaming decode drops a character cut in half at the limit instead of showing U+FFFD.
    return new TextDecoder('utf-8').decode(data, { stream: true }) + truncationMarker(this.total - this.kept);
  }
}

/** Kills a process and everything it started: its process group on POSIX, `taskkill /T` on Windows. */
export function killProcessTree(child: ChildProcess, platform: NodeJS.Platform = process.platform): void {
  const { pid } = child;
  if (pid === undefined) return;
  if (platform === 'win32') {
    const systemRoot = process.env.SystemRoot ?? process.env.SYSTEMROOT ?? 'C:\\Windows';
    const taskkill = spawn(path.win32.join(systemRoot, 'System32', 'taskkill.exe'), ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
    taskkill.on('error', () => child.kill('SIGKILL'));
    return;
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/**
 * Runs a program without a shell (unless `shell` is set) and captures its output.
 *
 * On POSIX the child leads its own process group so a timeout or cancellation kills the whole tree.
 * Resolves when the process has exited and its output is read; rejects only when it cannot start.
 */
export function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const platform = options.platform ?? process.platform;
  const windows = platform === 'win32';
  const started = performance.now();
  return new Promise<ProcessResult>((resolve, reject) => {
    if (options.signal.aborted) {
      reject(new CapabilityError('cancelled', 'The command was cancelled before it started.'));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(options.file, options.args as string[], {
        cwd: options.cwd,
        env: options.env,
        shell: options.shell ?? false,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: !windows,
        windowsHide: true,
      });
    } catch (error) {
      reject(new CapabilityError('failed', `Could not start ${options.shell ? 'the shell' : options.file}: ${(error as Error).message}`, { cause: error }));
      return;
    }
    const stdout = new OutputBuffer(options.maxOutputBytes);
    const stderr = new OutputBuffer(options.maxOutputBytes);
    let timedOut = false;
    let cancelled = false;
    let killed = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let finished = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const status = (): RunStatus => ({ elapsedMs: performance.now() - started, stdoutBytes: stdout.total, stderrBytes: stderr.total });
    const progressTimer = options.onProgress
      ? setInterval(() => {
          try {
            options.onProgress?.(status());
          } catch {
            // A progress consumer's fault must not disturb the process.
          }
        }, options.progressIntervalMs ?? 500)
      : undefined;

    const kill = () => {
      if (killed || exit) return;
      killed = true;
      killProcessTree(child, platform);
      killTimer = setTimeout(() => finish(), KILL_WAIT_MS);
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.min(options.timeoutMs, MAX_TIMER_MS));
    const onAbort = () => {
      cancelled = true;
      kill();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });

    const cleanup = () => {
      clearTimeout(deadline);
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      clearInterval(progressTimer);
      options.signal.removeEventListener('abort', onAbort);
    };

    function finish() {
      if (finished) return;
      finished = true;
      cleanup();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        pid: child.pid,
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? (killed ? 'SIGKILL' : null),
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutBytes: stdout.total,
        stderrBytes: stderr.total,
        truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
        timedOut,
        cancelled,
        durationMs: Math.round(performance.now() - started),
      });
    }

    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // Errors after start (e.g. a failed kill) do not end the run.
      finished = true;
      cleanup();
      const what = options.shell ? 'the shell' : options.file;
      const reason = error.code === 'ENOENT' ? 'not found' : error.code === 'EACCES' ? 'permission denied' : error.message;
      reject(new CapabilityError('failed', `Could not start ${what}: ${reason}.`, { cause: error }));
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      clearTimeout(killTimer);
      drainTimer = setTimeout(finish, EXIT_DRAIN_MS);
    });
    child.once('close', () => finish());
  });
}
