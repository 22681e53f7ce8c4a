import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { CapabilityError } from '../../errors.js';
import { killProcessTree } from '../../internal/runProcess.js';

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
/** How long output is still read after the program exited. */
const EXIT_DRAIN_MS = 150;
/** How long to wait for the exit after a kill before giving up on it. */
const KILL_WAIT_MS = 3_000;

/**
 * Runs a backend program without a shell, in its own process group (a timeout, cancellation or
 * `stopWhen` kills the whole tree). Rejects only when the program cannot start.
 */
export function runTool(options: ToolRunOptions): Promise<ToolRunResult> {
  const started = performance.now();
  return new Promise<ToolRunResult>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new CapabilityError('cancelled', 'The command was cancelled before it started.'));
      return;
    }
    const windows = process.platform === 'win32';
    const stdio: StdioOptions = [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'];
    let child: ChildProcess;
    try {
      child = spawn(options.file, options.args as string[], { env: options.env ?? process.env, stdio, detached: !windows, windowsHide: true });
    } catch (error) {
      reject(new CapabilityError('failed', `Could not start ${options.file}: ${(error as Error).message}`, { cause: error }));
      return;
    }
    const limit = options.maxStdoutBytes ?? DEFAULT_STDOUT_LIMIT;
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let stderr = '';
    let timedOut = false;
    let cancelled = false;
    let stopped = false;
    let killed = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let done = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    let graceTimer: NodeJS.Timeout | undefined;
    let terminating = false;
    const kill = () => {
      if (killed || exit) return;
      killed = true;
      const grace = windows ? undefined : options.killGraceMs;
      terminating = grace !== undefined && signalGroup(child, 'SIGTERM');
      if (terminating) graceTimer = setTimeout(() => killProcessTree(child), grace);
      else killProcessTree(child);
      killTimer = setTimeout(finish, KILL_WAIT_MS + (grace ?? 0));
    };
    const stop = () => {
      stopped = true;
      if (options.stopSignal !== 'SIGINT' || windows) {
        kill();
        return;
      }
      try {
        child.kill('SIGINT');
      } catch {
        kill();
        return;
      }
      graceTimer = setTimeout(kill, KILL_WAIT_MS);
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    function finish() {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.stdin?.destroy();
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? (killed ? 'SIGKILL' : null),
        stdout: Buffer.concat(chunks),
        stderr,
        truncated,
        timedOut,
        cancelled,
        stopped,
        durationMs: Math.round(performance.now() - started),
      });
    }

    child.stdout?.on('data', (chunk: Buffer) => {
      const room = limit - kept;
      if (chunk.length > room) {
        truncated = true;
        if (options.killOnOverflow) kill();
      }
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(part);
        kept += part.length;
      }
      if (options.stopWhen && !stopped && !killed && options.stopWhen(Buffer.concat(chunks).toString('utf8'))) stop();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (options.keepStderr === 'tail') stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_LIMIT);
      else if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8').slice(0, STDERR_LIMIT - stderr.length);
    });
    child.stdin?.on('error', () => undefined); // A program that exits without reading its input closes the pipe.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      done = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', onAbort);
      const reason = error.code === 'ENOENT' ? 'not found' : error.code === 'EACCES' ? 'permission denied' : error.message;
      reject(new CapabilityError('failed', `Could not start ${options.file}: ${reason}.`, { cause: error }));
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      clearTimeout(killTimer);
      clearTimeout(graceTimer);
      // The program ended on SIGTERM: what it started and left behind goes now.
      if (terminating) killProcessTree(child);
      drainTimer = setTimeout(finish, options.resolveOnExit ? EXIT_DRAIN_MS : KILL_WAIT_MS);
    });
    child.once('close', () => finish());
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Sends `signal` to the child's process group; false when there is none to signal. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
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
