import os from 'node:os';
import { z } from 'zod';
import { isTimeoutError, waitFor } from '@capnode/toolkit';
import { defineCapability, defineCommand, type Capability, type CommandContext, type InvocationRequest } from '../contract.js';
import { json } from '../content.js';
import { CapabilityError } from '../errors.js';
import { definePlugin } from '../plugin.js';
import type { ShellEndListener, ShellLimits, ShellSessions } from './internal/shellSessions.js';
import type { ShellSession } from './internal/shellSession.js';
import { readSessionOutput, sessionSummary, type ShellReadResult } from './internal/shellViews.js';

/** Default running sessions per caller. */
export const DEFAULT_SHELL_SESSIONS_PER_CALLER = 8;
/** Default bytes kept per stream of a session (the last MiB of stdout, and of stderr). */
export const DEFAULT_SHELL_OUTPUT_BYTES = 1024 * 1024;
/** Most bytes one `shell.read` returns per stream. */
export const MAX_SHELL_READ_BYTES = 1024 * 1024;
/** Most bytes one `shell.write` takes. */
export const MAX_SHELL_WRITE_BYTES = 1024 * 1024;
/** Longest `shell.read` wait for new output. */
export const MAX_SHELL_READ_WAIT_MS = 30_000;
const DEFAULT_READ_BYTES = 64 * 1024;
const DEFAULT_KILL_GRACE_MS = 2_000;
const MAX_KILL_GRACE_MS = 30_000;
/** How long `shell.kill` waits for the end after the SIGKILL. */
const KILL_WAIT_MS = 5_000;
/** How long `shell.write` waits for a program that does not read its stdin. */
const WRITE_WAIT_MS = 10_000;

/** Settings of the shell plugin (`pluginSettings.shell`), also options of {@link createShellCapability}. */
export const shellSettingsSchema = z.object({
  maxSessionsPerCaller: z.number().int().min(1).max(256).default(DEFAULT_SHELL_SESSIONS_PER_CALLER),
  maxOutputBytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULT_SHELL_OUTPUT_BYTES),
});

/** Options of {@link createShellCapability}. */
export interface ShellCapabilityOptions {
  /** Running sessions one caller may have at once. Default {@link DEFAULT_SHELL_SESSIONS_PER_CALLER}. */
  readonly maxSessionsPerCaller?: number;
  /** Bytes kept per stream of each session. Default {@link DEFAULT_SHELL_OUTPUT_BYTES}. */
  readonly maxOutputBytes?: number;
  /** The environment whose PATH finds programs and whose base set sessions inherit. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where sessions without cwd run. Default: the user's home directory (as `system.run`). */
  readonly defaultCwd?: string;
  /** Ends every session (SIGTERM, then SIGKILL) when it aborts: the host closing or the plugin unloading. */
  readonly signal?: AbortSignal;
}

const commandInput = z
  .union([z.array(z.string().max(131_072)).min(1).max(4096), z.string().min(1).max(131_072)])
  .describe('argv array (runs without a shell), or a command-line string split on spaces with quotes honoured (shell syntax needs shell: true).');

const startInput = z.strictObject({
  command: commandInput,
  shell: z.boolean().optional().describe("Run the command string in the platform shell (/bin/sh, cmd.exe). Needs exec approvals mode 'full' or the user's approval."),
  cwd: z.string().min(1).max(4096).optional().describe("Working directory (absolute, or relative to the user's home); must exist. Default: the user's home directory."),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe('Variables set for the program over a minimal base (PATH, HOME, USER, LANG, TERM, TZ, …); every one is part of what the user approves.'),
});

const sessionIdInput = z.string().min(1).max(64).describe('The id shell.start returned.');

const readInput = z.strictObject({
  sessionId: sessionIdInput,
  stdoutCursor: z.number().int().min(0).default(0).describe('Byte offset into stdout to read from: the previous read\'s stdout.nextCursor (0 for everything kept).'),
  stderrCursor: z.number().int().min(0).default(0).describe('Byte offset into stderr to read from: the previous read\'s stderr.nextCursor.'),
  maxBytes: z.number().int().min(16).max(MAX_SHELL_READ_BYTES).default(DEFAULT_READ_BYTES).describe('Most bytes returned per stream; a read cut there says truncated: true and is an exact prefix of the output.'),
  waitMs: z.number().int().min(0).max(MAX_SHELL_READ_WAIT_MS).default(0).describe('When nothing new is there yet, wait this long for output or the end before answering.'),
});

const writeInput = z
  .strictObject({
    sessionId: sessionIdInput,
    data: z.string().max(MAX_SHELL_WRITE_BYTES).default('').describe('Text written to the program\'s stdin (UTF-8), exactly as given: add "\\n" to end a line.'),
    eof: z.boolean().default(false).describe('Close stdin after the data (the program then reads end of file).'),
  })
  .refine((value) => Buffer.byteLength(value.data) <= MAX_SHELL_WRITE_BYTES, { message: `data is longer than ${MAX_SHELL_WRITE_BYTES} bytes.` });

const killInput = z.strictObject({
  sessionId: sessionIdInput,
  signal: z.enum(['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGKILL']).default('SIGTERM').describe('Signal sent to the whole process group first.'),
  graceMs: z.number().int().min(0).max(MAX_KILL_GRACE_MS).default(DEFAULT_KILL_GRACE_MS).describe('SIGKILL follows after this many ms if the program still runs.'),
});

/**
 * Who a session belongs to, for the per-caller limit: the client connection when the transport has
 * one, else the transport and the client's token name, else its self-reported name.
 */
function shellOwnerOf(request: InvocationRequest): string {
  if (request.connection) return `connection:${request.connection.id}`;
  return request.client === undefined ? `${request.transport}:${request.caller ?? ''}` : `${request.transport}#${request.client}`;
}

/** Tells the connection that started a session how it ended (`shell_completed`). */
function completionNotifier(request: InvocationRequest): ShellEndListener | undefined {
  const connection = request.connection;
  if (!connection) return undefined;
  return (session, end) =>
    connection.notify({
      type: 'shell_completed',
      sessionId: session.id,
      status: end.status,
      exitCode: end.exitCode,
      signal: end.signal,
      stdoutBytes: session.stdout.total,
      stderrBytes: session.stderr.total,
      at: end.endedAt,
    });
}

function limitsOf(options: ShellCapabilityOptions): ShellLimits {
  const settings = shellSettingsSchema.parse({
    ...(options.maxSessionsPerCaller === undefined ? {} : { maxSessionsPerCaller: options.maxSessionsPerCaller }),
    ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
  });
  return { ...settings, maxSessions: Math.max(64, settings.maxSessionsPerCaller), maxEndedSessions: 64, closeGraceMs: DEFAULT_KILL_GRACE_MS };
}

/** The session table, created on the first `shell.start` (nothing of it loads before). */
function lazySessions(options: ShellCapabilityOptions): { open(): Promise<ShellSessions>; peek(): ShellSessions | undefined } {
  let sessions: ShellSessions | undefined;
  let opening: Promise<ShellSessions> | undefined;
  options.signal?.addEventListener('abort', () => void sessions?.close(), { once: true });
  return {
    open: () =>
      (opening ??= import('./internal/shellSessions.js').then(({ createShellSessions }) => {
        sessions = createShellSessions(limitsOf(options));
        if (options.signal?.aborted) void sessions.close();
        return sessions;
      })),
    peek: () => sessions,
  };
}

function sessionOf(table: ShellSessions | undefined, id: string): ShellSession {
  if (!table) throw new CapabilityError('invalid_arguments', `No shell session '${id}'; shell.list shows the sessions.`, { data: { reason: 'unknown_session' } });
  return table.get(id);
}

async function readOutput(session: ShellSession, args: z.output<typeof readInput>, ctx: CommandContext): Promise<ShellReadResult> {
  const first = readSessionOutput(session, args);
  const nothingNew = first.stdout.text === '' && first.stderr.text === '' && first.stdout.droppedBytes === 0 && first.stderr.droppedBytes === 0;
  if (args.waitMs === 0 || session.ended || !nothingNew) return first;
  try {
    await waitFor(session.nextChange(), { timeoutMs: args.waitMs, signal: ctx.signal });
  } catch (error) {
    if (!isTimeoutError(error)) throw new CapabilityError('cancelled', 'shell.read was cancelled while it waited for output.');
  }
  return readSessionOutput(session, args);
}

/**
 * `shell.start|read|write|kill|list`: programs that keep running after the call that started them.
 * `shell.start` is gated by the exec approval policy exactly as `system.run` (`approval: 'exec'`: the
 * same program, cwd and env checks, asked once for the session's command); reading, writing and
 * killing a session started that way need no further approval. Each session's stdout and stderr are
 * kept apart, the last `maxOutputBytes` of each; sessions end with the host (SIGTERM, then SIGKILL to
 * their process groups). When a session ends, the client connection that started it (when its
 * transport keeps one: `InvocationRequest.connection`) gets a `shell_completed` event. Local transports
 * only: OpenClaw's gateway defines no `shell.*` commands.
 */
export function createShellCapability(options: ShellCapabilityOptions = {}): Capability {
  const table = lazySessions(options);
  const defaults = () => ({ env: options.env ?? process.env, defaultCwd: options.defaultCwd ?? os.homedir() });
  return defineCapability({
    category: 'shell',
    commands: [
      defineCommand({
        name: 'shell.start',
        description:
          "Starts a program as a background shell session on this machine and returns its session id at once; the program keeps running after this call. Read its output with shell.read, write its stdin with shell.write, end it with shell.kill. Pass command as an argv array (preferred) or a string; shell: true for pipes and redirection. Subject to the user's exec approval policy, asked once per session.",
        annotations: { title: 'Start a shell session', destructive: true, openWorld: true },
        approval: 'exec',
        localOnly: true,
        input: startInput,
        async execute(args, ctx) {
          const { approvedLaunch } = await import('../internal/execLaunch.js');
          const launch = await approvedLaunch('shell.start', args, ctx.request, defaults());
          const sessions = await table.open();
          let session: ShellSession;
          try {
            session = await sessions.start(shellOwnerOf(ctx.request), launch, completionNotifier(ctx.request));
          } catch (error) {
            if (error instanceof CapabilityError) throw error;
            const code = (error as NodeJS.ErrnoException).code;
            throw new CapabilityError('failed', `Could not start ${launch.shell ? 'the shell' : launch.file}: ${code === 'ENOENT' ? 'not found' : code === 'EACCES' ? 'permission denied' : 'the system refused'}.`);
          }
          return json(sessionSummary(session));
        },
      }),
      defineCommand({
        name: 'shell.read',
        description:
          'Reads a shell session\'s new output since the cursors of the previous read (stdout and stderr apart), and whether the program has ended with its exit code or signal. Pass each stream\'s nextCursor back to read on; output older than the kept bytes is reported as droppedBytes.',
        annotations: { title: 'Read a shell session', readOnly: true },
        localOnly: true,
        input: readInput,
        async execute(args, ctx) {
          const session = sessionOf(table.peek(), args.sessionId);
          return json(await readOutput(session, args, ctx));
        },
      }),
      defineCommand({
        name: 'shell.write',
        description: "Writes text to a running shell session's stdin; eof: true closes stdin afterwards.",
        annotations: { title: 'Write to a shell session', destructive: true },
        localOnly: true,
        input: writeInput,
        async execute(args, ctx) {
          const session = sessionOf(table.peek(), args.sessionId);
          if (!session.stdinIsOpen) {
            throw new CapabilityError('failed', session.ended ? `Shell session '${session.id}' has ended; its stdin is closed.` : `The stdin of shell session '${session.id}' is closed (eof was sent, or the program closed it).`, {
              data: { reason: 'stdin_closed' },
            });
          }
          const bytes = Buffer.from(args.data, 'utf8');
          try {
            await waitFor(session.write(bytes, args.eof), { timeoutMs: WRITE_WAIT_MS, signal: ctx.signal });
          } catch (error) {
            if (isTimeoutError(error)) throw new CapabilityError('timeout', `Shell session '${session.id}' did not read its stdin within ${WRITE_WAIT_MS / 1000} s.`);
            if (ctx.signal.aborted) throw new CapabilityError('cancelled', 'shell.write was cancelled.');
            throw new CapabilityError('failed', `Could not write to the stdin of shell session '${session.id}': the program closed it.`, { data: { reason: 'stdin_closed' } });
          }
          return json({ sessionId: session.id, bytes: bytes.length, stdinOpen: session.stdinIsOpen });
        },
      }),
      defineCommand({
        name: 'shell.kill',
        description:
          'Ends a shell session: sends signal (default SIGTERM) to its whole process group, then SIGKILL after graceMs if it still runs, and returns how it ended. Killing a session that already ended returns how it ended.',
        annotations: { title: 'Kill a shell session', destructive: true, idempotent: true },
        localOnly: true,
        input: killInput,
        async execute(args, ctx) {
          const session = sessionOf(table.peek(), args.sessionId);
          const wasRunning = !session.ended;
          await waitFor(session.kill(args.signal, args.graceMs, 'killed'), { timeoutMs: args.graceMs + KILL_WAIT_MS, signal: ctx.signal }).catch(() => undefined);
          return json({ ...sessionSummary(session), wasRunning });
        },
      }),
      defineCommand({
        name: 'shell.list',
        description: 'Lists the shell sessions: running ones and recently ended ones, with their command, pid, status, exit code or signal, and output byte counts.',
        annotations: { title: 'List shell sessions', readOnly: true },
        localOnly: true,
        input: z.strictObject({}),
        execute() {
          const sessions = table.peek()?.list() ?? [];
          return json({ sessions: sessions.map(sessionSummary) });
        },
      }),
    ],
  });
}

/** The shell plugin of the pack; its settings are `pluginSettings.shell` (limits), and the host closing ends every session. */
export const shellPlugin = definePlugin((context) => {
  const settings = shellSettingsSchema.parse(context.settings);
  return createShellCapability({ ...settings, signal: context.signal });
});
