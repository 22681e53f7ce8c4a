import { CapabilityError } from '../../errors.js';
import { readRing, type StreamRead } from './outputRing.js';
import type { ShellSession } from './shellSession.js';

/** A session as `shell.start`, `shell.kill` and `shell.list` describe it. */
export interface ShellSessionSummary {
  [key: string]: unknown;
  readonly sessionId: string;
  readonly command: string;
  readonly cwd: string;
  readonly pid: number | null;
  /** `running`, or how it ended: `exited` by itself, `killed` by `shell.kill`, `cancelled` by the host closing. */
  readonly status: 'running' | 'exited' | 'killed' | 'cancelled';
  /** Exit code once ended; `null` while running or when a signal ended it. */
  readonly exitCode: number | null;
  /** The signal that ended it, else `null`. */
  readonly signal: string | null;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly stdinOpen: boolean;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

/** What `shell.read` returns. */
export interface ShellReadResult {
  [key: string]: unknown;
  readonly sessionId: string;
  readonly status: ShellSessionSummary['status'];
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: StreamRead;
  readonly stderr: StreamRead;
  /** Either stream was cut at `maxBytes`: read again from its `nextCursor` for the rest. */
  readonly truncated: boolean;
}

export function sessionSummary(session: ShellSession): ShellSessionSummary {
  const end = session.ended;
  return {
    sessionId: session.id,
    command: session.launch.commandLine,
    cwd: session.launch.cwd,
    pid: session.pid ?? null,
    status: end?.status ?? 'running',
    exitCode: end?.exitCode ?? null,
    signal: end?.signal ?? null,
    stdoutBytes: session.stdout.total,
    stderrBytes: session.stderr.total,
    stdinOpen: session.stdinIsOpen,
    startedAt: new Date(session.startedAt).toISOString(),
    endedAt: end ? new Date(end.endedAt).toISOString() : null,
  };
}

/**
 * The output of both streams since their cursors, bounded by `maxBytes` each.
 *
 * @throws CapabilityError `invalid_arguments` when a cursor lies beyond what the stream has written.
 */
export function readSessionOutput(session: ShellSession, args: { readonly stdoutCursor: number; readonly stderrCursor: number; readonly maxBytes: number }): ShellReadResult {
  // The end is read first: output read after it is complete, so a reader that sees the end has seen everything.
  const end = session.ended;
  const read = (name: 'stdout' | 'stderr', cursor: number): StreamRead => {
    const ring = session[name];
    const result = readRing(ring, cursor, args.maxBytes, end !== undefined);
    if (!result) {
      throw new CapabilityError('invalid_arguments', `${name}Cursor ${cursor} is beyond the ${ring.total} bytes ${name} has written; pass the nextCursor of the previous read.`, {
        data: { reason: 'cursor_out_of_range', stream: name, totalBytes: ring.total },
      });
    }
    return result;
  };
  const stdout = read('stdout', args.stdoutCursor);
  const stderr = read('stderr', args.stderrCursor);
  return {
    sessionId: session.id,
    status: end?.status ?? 'running',
    exitCode: end?.exitCode ?? null,
    signal: end?.signal ?? null,
    stdout,
    stderr,
    truncated: stdout.truncated || stderr.truncated,
  };
}
