import { CapabilityError } from '../../errors.js';
import { runChild, type ChildControl } from '../../internal/processCore.js';

/** One run of a backend program (clipboard tool, speech engine, recorder, locator). */
export interface ToolRunOptions {
  /** Absolute program path. */
  readonly file: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Written to stdin, which is then closed; absent means stdin is `/dev/null`. */
  readonly input?: string | Uint8Array | undefined;
  /** Killed after this long (`timedOut` is then set). */
  readonly timeoutMs: number;
  /** Bytes of stdout kept; more is dropped and `truncated` set. */
  readonly maxStdoutBytes?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /**
   * Sees stdout as it arrives (decoded as UTF-8, all of it so far); returning true ends the run
   * early (the process is killed and `stopped` set), e.g. once a locator printed a full fix.
   */
  readonly stopWhen?: (stdoutSoFar: string) => boolean;
  /**
   * How an early stop ends the program: `SIGINT` lets it finish its output (ffmpeg writes the WAV
   * trailer), then the tree is killed if it has not exited after a grace period. Default: kill at once.
   */
  readonly stopSignal?: 'SIGINT';
  /**
   * Resolve when the program itself exits, not when its output pipes close: for tools that fork a
   * server which inherits the pipes (xclip, wl-copy). Output is read for a short moment after exit.
   */
  readonly resolveOnExit?: boolean | undefined;
  /**
   * On timeout or cancellation send the tree SIGTERM first and SIGKILL only after this grace period
   * (POSIX; a recorder may tidy up). Default: SIGKILL at once.
   */
  readonly killGraceMs?: number | undefined;
  /** Kill the run as soon as stdout passes `maxStdoutBytes` (`truncated` is then set) instead of reading on. */
  readonly killOnOverflow?: boolean | undefined;
  /** Which 16 KiB of stderr to keep: the start (default) or the end (ffmpeg's reason comes last). */
  readonly keepStderr?: 'head' | 'tail' | undefined;
}

export interface ToolRunResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: Buffer;
  readonly stderr: string;
  readonly truncated: boolean;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** Ended by `stopWhen`. */
  readonly stopped: boolean;
  readonly durationMs: number;
}

const STDERR_LIMIT = 16 * 1024;
const DEFAULT_STDOUT_LIMIT = 1024 * 1024;
/** With `resolveOnExit`: how long output is still read after the program exited. */
const EXIT_DRAIN_MS = 150;
/**
 * How long to wait for the exit after a kill before giving up on it; also how long the pipes may stay
 * open after the exit without `resolveOnExit`, and how long a `SIGINT` stop may take before the kill.
 */
const KILL_WAIT_MS = 3_000;

/**
 * Runs a backend program without a shell, in its own process group (a timeout, cancellation or
 * `stopWhen` kills the whole tree). Rejects only when the program cannot start.
 */
export async function runTool(options: ToolRunOptions): Promise<ToolRunResult> {
  const limit = options.maxStdoutBytes ?? DEFAULT_STDOUT_LIMIT;
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  let stderr = '';
  let stopped = false;

  const stop = (control: ChildControl) => {
    stopped = true;
    if (options.stopSignal === 'SIGINT') control.interrupt('SIGINT', KILL_WAIT_MS);
    else control.kill();
  };
  const onStdout = (chunk: Buffer, control: ChildControl) => {
    const room = limit - kept;
    if (chunk.length > room) {
      truncated = true;
      if (options.killOnOverflow) control.kill();
    }
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    }
    if (options.stopWhen && !stopped && !control.killed && options.stopWhen(Buffer.concat(chunks).toString('utf8'))) stop(control);
  };
  const onStderr = (chunk: Buffer) => {
    if (options.keepStderr === 'tail') stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_LIMIT);
    else if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8').slice(0, STDERR_LIMIT - stderr.length);
  };

  const run = await runChild({
    file: options.file,
    args: options.args,
    env: options.env ?? process.env,
    input: options.input,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    killGraceMs: options.killGraceMs,
    // Without resolveOnExit the run waits for the pipes to close, as long as for a killed program's exit.
    exitDrainMs: options.resolveOnExit ? EXIT_DRAIN_MS : KILL_WAIT_MS,
    killWaitMs: KILL_WAIT_MS,
    onStdout,
    onStderr,
  });
  return {
    exitCode: run.exitCode,
    signal: run.signal,
    stdout: Buffer.concat(chunks),
    stderr,
    truncated,
    timedOut: run.timedOut,
    cancelled: run.cancelled,
    stopped,
    durationMs: run.durationMs,
  };
}

/** The first line of a program's stderr, trimmed and bounded, for an error message. */
export function firstLine(text: string, fallback: string): string {
  const line = text
    .split('\n')
    .map((part) => part.trim())
    .find((part) => part.length > 0);
  return line ? line.slice(0, 300) : fallback;
}

/** Turns a cancelled or timed-out run into the matching error; returns the result otherwise. */
export function checkRun(result: ToolRunResult, what: string): ToolRunResult {
  if (result.cancelled) throw new CapabilityError('cancelled', `${what} was cancelled.`);
  if (result.timedOut) throw new CapabilityError('timeout', `${what} did not finish in time.`);
  return result;
}

/** PowerShell arguments for a script: no profile, single-threaded apartment (the clipboard needs it), encoded command. */
export function powershellArgs(script: string): string[] {
  return ['-NoProfile', '-NonInteractive', '-Sta', '-ExecutionPolicy', 'Bypass', '-EncodedCommand', Buffer.from(script, 'utf16le').toString('base64')];
}
