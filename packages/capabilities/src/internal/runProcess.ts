import { runChild } from './processCore.js';

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

/**
 * Runs a program without a shell (unless `shell` is set) and captures its output.
 *
 * On POSIX the child leads its own process group so a timeout or cancellation kills the whole tree.
 * Resolves when the process has exited and its output is read; rejects only when it cannot start.
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
  const stdout = new OutputBuffer(options.maxOutputBytes);
  const stderr = new OutputBuffer(options.maxOutputBytes);
  const status = (): RunStatus => ({ elapsedMs: performance.now() - started, stdoutBytes: stdout.total, stderrBytes: stderr.total });
  const progressTimer =
    options.onProgress && !options.signal.aborted
      ? setInterval(() => {
          try {
            options.onProgress?.(status());
          } catch {
            // A progress consumer's fault must not disturb the process.
          }
        }, options.progressIntervalMs ?? 500)
      : undefined;
  try {
    const run = await runChild({
      file: options.file,
      args: options.args,
      shell: options.shell ?? false,
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      platform: options.platform,
      exitDrainMs: EXIT_DRAIN_MS,
      killWaitMs: KILL_WAIT_MS,
      onStdout: (chunk) => stdout.push(chunk),
      onStderr: (chunk) => stderr.push(chunk),
    });
    return {
      pid: run.pid,
      exitCode: run.exitCode,
      signal: run.signal,
      stdout: stdout.text(),
      stderr: stderr.text(),
      stdoutBytes: stdout.total,
      stderrBytes: stderr.total,
      truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
      timedOut: run.timedOut,
      cancelled: run.cancelled,
      durationMs: run.durationMs,
    };
  } finally {
    clearInterval(progressTimer);
  }
}
