import { spawn, type ChildProcess } from 'node:child_process';
import type { ApprovedLaunch } from '../../internal/execLaunch.js';
import { killProcessTree } from '../../internal/processCore.js';
import { OutputRing } from './outputRing.js';

/** How a session ended: by itself, by `shell.kill`, or because the host closed. */
export type ShellEndStatus = 'exited' | 'killed' | 'cancelled';

/** What a session's program is and where it runs: exactly what the exec policy approved. */
export type ShellLaunch = ApprovedLaunch;

/** How a session ended, once it has. */
export interface ShellEnd {
  readonly status: ShellEndStatus;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly endedAt: number;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/** A promise and its resolver (Node 20 has no `Promise.withResolvers`). */
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** How long output is still read after the program exited (a background child may hold the pipes). */
const EXIT_DRAIN_MS = 500;

/**
 * One running (or ended) program of a shell session: its process group, stdin, and the last bytes of
 * stdout and stderr. The program leads its own process group on POSIX, so a kill reaches everything it
 * started. Nothing here keeps the host process alive: the child and its pipes are unreferenced.
 */
export class ShellSession {
  readonly stdout: OutputRing;
  readonly stderr: OutputRing;
  readonly startedAt = Date.now();
  private readonly child: ChildProcess;
  private ending: ShellEndStatus | undefined;
  private outcome: ShellEnd | undefined;
  private stdinOpen: boolean;
  private changed = deferred<void>();
  private readonly finished = deferred<ShellEnd>();
  private killTimer: NodeJS.Timeout | undefined;
  /** The program exited while others of its process group still held its output pipes. */
  private leftovers = false;

  private constructor(
    readonly id: string,
    readonly owner: string,
    readonly launch: ShellLaunch,
    child: ChildProcess,
    maxOutputBytes: number,
    private readonly onEnd: (session: ShellSession, end: ShellEnd) => void,
  ) {
    this.child = child;
    this.stdout = new OutputRing(maxOutputBytes);
    this.stderr = new OutputRing(maxOutputBytes);
    this.stdinOpen = child.stdin !== null;
    this.attach();
  }

  /**
   * Starts the program and resolves once it is running (its `spawn` event).
   *
   * @throws Error (a Node spawn error, with `code`) when it cannot start.
   */
  static async start(id: string, owner: string, launch: ShellLaunch, maxOutputBytes: number, onEnd: (session: ShellSession, end: ShellEnd) => void): Promise<ShellSession> {
    const child = spawn(launch.file, launch.args as string[], {
      cwd: launch.cwd,
      env: launch.env,
      shell: launch.shell,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    return new ShellSession(id, owner, launch, child, maxOutputBytes, onEnd);
  }

  private attach(): void {
    const { child } = this;
    child.stdout?.on('data', (chunk: Buffer) => this.received(this.stdout, chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.received(this.stderr, chunk));
    child.stdin?.on('error', () => {
      this.stdinOpen = false;
    });
    child.on('error', () => undefined); // Errors after start (a failed kill) do not end the session.
    let exit: { code: number | null; signal: string | null } | undefined;
    let drain: NodeJS.Timeout | undefined;
    const end = () => {
      clearTimeout(drain);
      this.end(exit?.code ?? null, exit?.signal ?? null);
    };
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // After a TERM, what the program left behind in its group is killed with it.
      if (this.ending !== undefined) killProcessTree(child);
      drain = setTimeout(() => {
        // The pipes are still open after the program exited: something it started in its group holds them.
        this.leftovers = true;
        end();
      }, EXIT_DRAIN_MS);
      drain.unref();
    });
    child.once('close', end);
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }

  private received(ring: OutputRing, chunk: Buffer): void {
    ring.push(chunk);
    this.notifyChange();
  }

  private notifyChange(): void {
    const changed = this.changed;
    this.changed = deferred<void>();
    changed.resolve(undefined);
  }

  private end(code: number | null, signal: string | null): void {
    if (this.outcome) return;
    clearTimeout(this.killTimer);
    this.outcome = { status: this.ending ?? 'exited', exitCode: code, signal, endedAt: Date.now() };
    this.stdinOpen = false;
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream?.destroy();
    this.notifyChange();
    this.finished.resolve(this.outcome);
    this.onEnd(this, this.outcome);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** How the session ended; `undefined` while it runs. */
  get ended(): ShellEnd | undefined {
    return this.outcome;
  }

  /** Resolves when the session ends. */
  get done(): Promise<ShellEnd> {
    return this.finished.promise;
  }

  /** Resolves at the next output or the end. */
  nextChange(): Promise<void> {
    return this.outcome ? Promise.resolve() : this.changed.promise;
  }

  get stdinIsOpen(): boolean {
    return this.stdinOpen && !this.outcome;
  }

  /** Writes to stdin; resolves once the bytes are handed to the pipe. Closes stdin after them when `eof`. */
  write(data: Buffer, eof: boolean): Promise<void> {
    const stdin = this.child.stdin;
    if (!stdin || !this.stdinIsOpen) return Promise.reject(new Error('stdin is closed'));
    if (eof) this.stdinOpen = false;
    return new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (eof) stdin.end(data, () => done());
      else stdin.write(data, done);
    });
  }

  /**
   * Ends the session: `signal` to the whole process group, then SIGKILL to the group after `graceMs`
   * if the program is still running (at once when it exits, for what it left behind). Resolves when
   * the session has ended. `status` says why it ended.
   */
  kill(signal: NodeJS.Signals, graceMs: number, status: ShellEndStatus): Promise<ShellEnd> {
    if (this.outcome) return this.finished.promise;
    this.ending ??= status;
    const pid = this.child.pid;
    let sent = false;
    if (pid !== undefined && process.platform !== 'win32' && signal !== 'SIGKILL') {
      try {
        process.kill(-pid, signal);
        sent = true;
      } catch {
        sent = false;
      }
    }
    if (sent) {
      clearTimeout(this.killTimer);
      this.killTimer = setTimeout(() => killProcessTree(this.child), graceMs);
      this.killTimer.unref();
    } else {
      killProcessTree(this.child);
    }
    return this.finished.promise;
  }

  /**
   * SIGKILL to the whole group at once, synchronously (the host is closing or its process exiting).
   * After the program exited, only when members of its group were seen alive then (they held its
   * pipes): they keep the group's id from being reused, and they end with the host as well.
   */
  killNow(): void {
    if (this.outcome) {
      if (this.leftovers) this.killLeftovers();
      return;
    }
    this.ending ??= 'cancelled';
    killProcessTree(this.child);
  }

  private killLeftovers(): void {
    this.leftovers = false;
    const pid = this.child.pid;
    if (pid === undefined || process.platform === 'win32') return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is gone.
    }
  }
}
