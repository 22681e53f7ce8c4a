import { spawn, type ChildProcess } from 'node:child_process';
import { JsonRpcErrorCode } from '@capnode/protocol';
import { parseJSONRPCMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { scrubAndCap } from '../redact.js';
import type { Logger } from '../types.js';
import { resolveWindowsCommand } from './windowsCommand.js';

export interface StdioTransportOptions {
  readonly server: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Longest stdout line (one JSON-RPC message); a longer one is discarded and its request failed. */
  readonly maxLineBytes: number;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
}

/** Longest stderr line passed to the logger; the rest of the line is dropped. */
const MAX_STDERR_LINE = 8 * 1024;
/** Stderr lines kept for diagnostics. */
const STDERR_TAIL_LINES = 5;
/** Bytes of an oversized line kept at each end to find its JSON-RPC id. */
const EDGE_BYTES = 512;
/**
 * Waits in `close()`: stdin EOF, then after this long SIGTERM to the process group, then after this
 * long again SIGKILL to the group. A server that ignores EOF and SIGTERM is gone within twice this.
 */
export const STDIO_CLOSE_GRACE_MS = 1_000;
/** Longest a failed write (EPIPE) waits for the child's exit status, which names the real cause. */
const EPIPE_EXIT_WAIT_MS = 1_000;

const IS_WINDOWS = process.platform === 'win32';
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    if (IS_WINDOWS) process.kill(pid, signal);
    else process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
  });
}

const TAIL_ID = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")\s*\}\s*$/;
const HEAD_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")/;

/** Recovers the top-level JSON-RPC id of a message from its two ends, without parsing the middle. */
function findId(head: string, tail: string): string | number | undefined {
  const match = TAIL_ID.exec(tail) ?? HEAD_ID.exec(head);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return undefined;
  }
}

/** The id of something that looks like a response (an id, no method), else `undefined`. */
function responseId(value: unknown): string | number | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (method !== undefined) return undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * MCP stdio client transport that owns its child process group.
 *
 * Differences from the SDK's: the child leads its own process group, and `close()` ends the whole
 * group (a server started through `npx` leaves no grandchildren); stdout lines are bounded (an
 * oversized message is discarded and its request answered with an error when its id can be
 * recovered, else the transport closes); non-JSON lines (banners) are skipped; stderr goes to the
 * logger line by line, scrubbed and bounded, never to our stdout.
 */
export class ProcessStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  readonly #options: StdioTransportOptions;
  #child: ChildProcess | undefined;
  #exited: Promise<void> | undefined;
  /** Settles on the child's `close`: it exited and every stdio stream of ours has closed. */
  #ended: Promise<void> | undefined;
  #closing = false;
  #closedNotified = false;
  readonly #stderrTail: string[] = [];
  #chunks: Buffer[] = [];
  #pending = 0;
  #overflow: { head: string; tail: Buffer } | undefined;
  #stderrPartial = '';
  #stderrDropping = false;
  #exit: string | undefined;
  #queued = '';
  #flushScheduled = false;
  #writeFailure: Error | undefined;

  constructor(options: StdioTransportOptions) {
    this.#options = options;
  }

  /** The child's pid (also its process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the child ended (`code 3`, `SIGKILL`) once it has exited, else `undefined`. */
  get exitStatus(): string | undefined {
    return this.#exit;
  }

  /** The last few stderr lines (scrubbed), for diagnostics when the server fails. */
  get stderrTail(): readonly string[] {
    return this.#stderrTail;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error('stdio transport already started');
    const { command, args, env, cwd } = this.#options;
    const childEnv = { ...getDefaultEnvironment(), ...env };
    // Never a shell: on Windows a .cmd/.bat launcher (npx.cmd) becomes `node <script>` or an escaped cmd.exe line.
    const target = IS_WINDOWS ? resolveWindowsCommand(command, args, { ...process.env, ...childEnv }) : { command, args, windowsVerbatimArguments: false };
    return new Promise((resolve, reject) => {
      const child = spawn(target.command, [...target.args], {
        env: childEnv,
        ...(cwd === undefined ? {} : { cwd }),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: !IS_WINDOWS,
        windowsHide: true,
        windowsVerbatimArguments: target.windowsVerbatimArguments,
        shell: false,
      });
      this.#child = child;
      this.#exited = new Promise((done) =>
        child.once('exit', (code, signal) => {
          this.#exit = signal ?? `code ${code}`;
          done();
        }),
      );
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
        this.#notifyClosed();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) {
          installExitHook();
          liveGroups.add(child.pid);
        }
        resolve();
      });
      this.#ended = new Promise((done) =>
        child.once('close', (code, signal) => {
          if (this.#stderrPartial) this.#logStderr(this.#stderrPartial);
          this.#stderrPartial = '';
          if (!this.#closing) {
            const tail = this.#stderrTail.length ? `; stderr: ${this.#stderrTail.join(' | ')}` : '';
            this.onerror?.(new Error(`server process exited (${signal ?? `code ${code}`})${tail}`));
          }
          // close() already ended the group once the child had exited.
          if (child.pid !== undefined && !this.#closing) {
            killGroup(child.pid, 'SIGKILL');
            liveGroups.delete(child.pid);
          }
          this.#notifyClosed();
          done();
        }),
      );
      // EPIPE on stdin only means the child is gone; its exit is reported with the exit status.
      child.stdin?.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') this.onerror?.(error);
      });
      child.stdout?.on('data', (chunk: Buffer) => this.#onStdout(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.on('data', (chunk: Buffer) => this.#onStderr(chunk));
      child.stderr?.on('error', () => {});
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    const failure = this.#writeFailure;
    if (failure) return new Promise((_, reject) => this.#rejectWithExit(failure, reject));
    if (!stdin || this.#closing || !stdin.writable) return Promise.reject(new Error('stdio transport is not connected'));
    const line = `${JSON.stringify(message)}\n`;
    if (!('id' in message)) {
      this.#queueNotification(line);
      return Promise.resolve();
    }
    const data = this.#takeQueued() + line;
    return new Promise((resolve, reject) => {
      stdin.write(data, (error) => {
        if (!error) resolve();
        else if ((error as NodeJS.ErrnoException).code === 'EPIPE') this.#rejectWithExit(error, reject);
        else reject(error);
      });
    });
  }

  /**
   * Notifications wait for the next message or the next event-loop turn and go out with it in one
   * write: `initialized` and the first `tools/list` reach the server as one pipe write, which
   * halves the handshake's syscalls and wake-ups when many servers start at once. A failed write
   * fails the sends after it with the server's exit status.
   */
  #queueNotification(line: string): void {
    this.#queued += line;
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flushQueued());
  }

  #takeQueued(): string {
    const queued = this.#queued;
    this.#queued = '';
    return queued;
  }

  #flushQueued(): void {
    this.#flushScheduled = false;
    const data = this.#takeQueued();
    const stdin = this.#child?.stdin;
    if (!data || !stdin || !stdin.writable) return;
    stdin.write(data, (error) => {
      if (!error) return;
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') this.#writeFailure ??= error;
      else this.onerror?.(error);
    });
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (this.#closing) {
      await (this.#ended ?? this.#exited);
      return;
    }
    this.#closing = true;
    if (!child || child.pid === undefined) {
      this.#notifyClosed();
      return;
    }
    const pid = child.pid;
    const exited = this.#exited!;
    const wait = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        void exited.then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    const alive = () => child.exitCode === null && child.signalCode === null;
    try {
      this.#flushQueued();
      child.stdin?.end();
    } catch {
      // The pipe may already be broken.
    }
    if (alive() && !(await wait(STDIO_CLOSE_GRACE_MS))) {
      killGroup(pid, 'SIGTERM');
      if (!(await wait(STDIO_CLOSE_GRACE_MS))) killGroup(pid, 'SIGKILL');
    }
    await exited;
    killGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.stdin?.destroy();
    this.#chunks = [];
    // Our ends are destroyed, so `close` follows at once: nothing of this child is left when close() resolves.
    await this.#ended;
    this.#notifyClosed();
  }

  /**
   * A write that fails with EPIPE means the child is gone; its exit (which follows at once) is the
   * real cause, so the write fails with it: "server process exited (code 3)", not "write EPIPE".
   */
  #rejectWithExit(error: Error, reject: (error: Error) => void): void {
    const exited = this.#exited;
    if (!exited) return reject(error);
    const timer = setTimeout(() => reject(error), EPIPE_EXIT_WAIT_MS);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server process exited (${this.#exit})`));
    });
  }

  #notifyClosed(): void {
    if (this.#closedNotified) return;
    this.#closedNotified = true;
    this.onclose?.();
  }

  #onStdout(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#append(chunk.subarray(start, end));
      if (newline === -1) return;
      this.#finishLine();
      start = newline + 1;
    }
  }

  #append(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#overflow) {
      const tail = Buffer.concat([this.#overflow.tail, part]);
      this.#overflow.tail = tail.subarray(Math.max(0, tail.length - EDGE_BYTES));
      return;
    }
    this.#pending += part.length;
    this.#chunks.push(part);
    if (this.#pending > this.#options.maxLineBytes) {
      const all = Buffer.concat(this.#chunks);
      this.#overflow = { head: all.subarray(0, EDGE_BYTES).toString('utf8'), tail: all.subarray(Math.max(0, all.length - EDGE_BYTES)) };
      this.#chunks = [];
      this.#pending = 0;
    }
  }

  #finishLine(): void {
    if (this.#overflow) {
      const { head, tail } = this.#overflow;
      this.#overflow = undefined;
      this.#onOversized(head, tail.toString('utf8'));
      return;
    }
    const line = Buffer.concat(this.#chunks).toString('utf8').replace(/\r$/, '');
    this.#chunks = [];
    this.#pending = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#options.logger.debug(`mcp server '${this.#options.server}' printed a non-JSON line on stdout (skipped): ${scrubAndCap(line, this.#options.scrub, 200)}`);
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      const id = responseId(value);
      if (id !== undefined) {
        // A known id with an invalid shape: fail that request now rather than at its timeout.
        const text = 'the server sent an invalid JSON-RPC response (neither a valid result nor an error)';
        this.#options.logger.warn(`mcp server '${this.#options.server}': ${text}`);
        this.onmessage?.({ jsonrpc: '2.0', id, error: { code: JsonRpcErrorCode.InternalError, message: text } } as JSONRPCMessage);
        return;
      }
      this.#options.logger.debug(`mcp server '${this.#options.server}' sent a line that is not JSON-RPC (skipped)`);
      return;
    }
    this.onmessage?.(message);
  }

  #onOversized(head: string, tail: string): void {
    const limit = this.#options.maxLineBytes;
    const text = `response exceeded max_response_bytes (${limit} bytes) and was discarded`;
    const id = findId(head, tail);
    this.#options.logger.warn(`mcp server '${this.#options.server}': a ${text}`);
    if (id !== undefined) {
      this.onmessage?.({ jsonrpc: '2.0', id, error: { code: JsonRpcErrorCode.InternalError, message: text } } as JSONRPCMessage);
      return;
    }
    this.onerror?.(new Error(`a message ${text}; closing the connection`));
    void this.close();
  }

  #onStderr(chunk: Buffer): void {
    const text = this.#stderrPartial + chunk.toString('utf8');
    const lines = text.split('\n');
    this.#stderrPartial = lines.pop() ?? '';
    for (const line of lines) {
      if (this.#stderrDropping) {
        this.#stderrDropping = false;
        continue;
      }
      this.#logStderr(line);
    }
    if (this.#stderrPartial.length > MAX_STDERR_LINE) {
      if (!this.#stderrDropping) this.#logStderr(this.#stderrPartial);
      this.#stderrDropping = true;
      this.#stderrPartial = '';
    }
  }

  #logStderr(raw: string): void {
    const line = scrubAndCap(raw.replace(/\r$/, ''), this.#options.scrub, MAX_STDERR_LINE);
    if (line.trim() === '') return;
    this.#stderrTail.push(line.slice(0, 300));
    if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
    this.#options.logger.debug(`[${this.#options.server} stderr] ${line}`);
  }
}
