import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CapabilityError } from '../errors.js';
import { armDeadline } from '@capnode/toolkit';

/** Steers a running child from an output hook. */
export interface ChildControl {
  /** A kill (timeout, cancellation or `kill()`) has begun. */
  readonly killed: boolean;
  /** Kills the tree, after `killGraceMs` of SIGTERM when that is set; nothing once killed or exited. */
  kill(): void;
  /**
   * Sends `signal` to the program alone so it can finish up (ffmpeg writes its trailer), and kills the
   * tree if it has not exited after `graceMs`. On Windows, or when the signal cannot be sent, kills at once.
   */
  interrupt(signal: NodeJS.Signals, graceMs: number): void;
}

/** One run of a program; the output is the caller's, through the hooks. */
export interface ChildRunOptions {
  /** Absolute program path, or the command line when `shell` is true. */
  readonly file: string;
  readonly args: readonly string[];
  /** Run `file` as a command line in the platform shell. Default: no shell. */
  readonly shell?: boolean | undefined;
  readonly cwd?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; absent means stdin is `/dev/null`. */
  readonly input?: string | Uint8Array | undefined;
  /** Killed after this long (capped at the longest timer delay). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** On timeout or cancellation send the group SIGTERM and SIGKILL only after this long (POSIX). Default: SIGKILL at once. */
  readonly killGraceMs?: number | undefined;
  /** How long output is still read after the program exited (a background child may hold the pipes). */
  readonly exitDrainMs: number;
  /** How long to wait for the exit after a kill (plus any grace) before giving up on it. */
  readonly killWaitMs: number;
  readonly platform?: NodeJS.Platform | undefined;
  readonly onStdout?: ((chunk: Buffer, control: ChildControl) => void) | undefined;
  readonly onStderr?: ((chunk: Buffer) => void) | undefined;
}

/** How a child ended. */
export interface ChildRunResult {
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  /** The signal it died of; `SIGKILL` when it was killed and its exit never came. */
  readonly signal: string | null;
  /** Killed because `timeoutMs` passed. */
  readonly timedOut: boolean;
  /** Killed because `signal` aborted. */
  readonly cancelled: boolean;
  readonly durationMs: number;
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

function startError(what: string, error: NodeJS.ErrnoException): CapabilityError {
  const reason = error.code === 'ENOENT' ? 'not found' : error.code === 'EACCES' ? 'permission denied' : error.message;
  return new CapabilityError('failed', `Could not start ${what}: ${reason}.`, { cause: error });
}

/**
 * Runs a program without a shell (unless `shell` is set); on POSIX it leads its own process group, so a
 * timeout, cancellation or kill ends the whole tree. Resolves once the program has exited and its output
 * is read (or `exitDrainMs` after the exit, or `killWaitMs` after a kill whose exit never came); rejects
 * only when it cannot start.
 */
export function runChild(options: ChildRunOptions): Promise<ChildRunResult> {
  const platform = options.platform ?? process.platform;
  const windows = platform === 'win32';
  const what = options.shell ? 'the shell' : options.file;
  const started = performance.now();
  return new Promise<ChildRunResult>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new CapabilityError('cancelled', 'The command was cancelled before it started.'));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(options.file, options.args as string[], {
        cwd: options.cwd,
        env: options.env,
        shell: options.shell ?? false,
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        detached: !windows,
        windowsHide: true,
      });
    } catch (error) {
      reject(new CapabilityError('failed', `Could not start ${what}: ${(error as Error).message}`, { cause: error }));
      return;
    }
    let timedOut = false;
    let cancelled = false;
    let killed = false;
    /** The group got SIGTERM: what the program leaves behind is killed when it exits. */
    let terminating = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let finished = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let interruptTimer: NodeJS.Timeout | undefined;

    const kill = () => {
      if (killed || exit) return;
      killed = true;
      const grace = windows ? undefined : options.killGraceMs;
      terminating = grace !== undefined && signalGroup(child, 'SIGTERM');
      if (terminating) graceTimer = setTimeout(() => killProcessTree(child, platform), grace);
      else killProcessTree(child, platform);
      killTimer = setTimeout(finish, options.killWaitMs + (grace ?? 0));
    };
    const interrupt = (signal: NodeJS.Signals, graceMs: number) => {
      if (windows) return kill();
      try {
        child.kill(signal);
      } catch {
        return kill();
      }
      clearTimeout(interruptTimer);
      interruptTimer = setTimeout(kill, graceMs);
    };
    const control: ChildControl = {
      get killed() {
        return killed;
      },
      kill,
      interrupt,
    };
    const deadline = armDeadline(options.signal === undefined ? { timeoutMs: options.timeoutMs } : { timeoutMs: options.timeoutMs, signal: options.signal }, (_reason, expired) => {
      if (expired) timedOut = true;
      else cancelled = true;
      kill();
    });

    const cleanup = () => {
      finished = true;
      deadline.clear();
      for (const timer of [drainTimer, killTimer, graceTimer, interruptTimer]) clearTimeout(timer);
    };
    function finish() {
      if (finished) return;
      cleanup();
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.stdin?.destroy();
      resolve({
        pid: child.pid,
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? (killed ? 'SIGKILL' : null),
        timedOut,
        cancelled,
        durationMs: Math.round(performance.now() - started),
      });
    }

    child.stdout?.on('data', (chunk: Buffer) => options.onStdout?.(chunk, control));
    child.stderr?.on('data', (chunk: Buffer) => options.onStderr?.(chunk));
    child.stdin?.on('error', () => undefined); // A program that exits without reading its input closes the pipe.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // Errors after start (e.g. a failed kill) do not end the run.
      cleanup();
      reject(startError(what, error));
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      for (const timer of [killTimer, graceTimer, interruptTimer]) clearTimeout(timer);
      if (terminating) killProcessTree(child, platform);
      drainTimer = setTimeout(finish, options.exitDrainMs);
    });
    child.once('close', () => finish());
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
