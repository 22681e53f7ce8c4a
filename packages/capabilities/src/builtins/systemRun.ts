import os from 'node:os';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCommand, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { formatDuration } from '../internal/askApproval.js';
import { approvedLaunch } from '../internal/execLaunch.js';
import { runProcess } from '../internal/runProcess.js';
import type { BuiltinOptions } from './options.js';
import { MAX_TIMER_MS } from '@capnode/toolkit';

export { resolveWorkingDirectory } from '../internal/execLaunch.js';

/** Default deadline of one `system.run` call. */
export const DEFAULT_RUN_TIMEOUT_MS = 120_000;
/** Default bytes kept per output stream (stdout and stderr each). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
const MAX_RUN_TIMEOUT_MS = 24 * 60 * 60_000;
const MAX_OUTPUT_LIMIT = 16 * 1024 * 1024;


/** The plan of `system.run.prepare` as OpenClaw gateways forward it (their extra fields kept as they are). */
export const systemRunPlanSchema = z
  .object({
    argv: z.array(z.string().max(131_072)).min(1).max(4096),
    cwd: z.string().min(1).max(4096).nullable().optional(),
    commandText: z.string().max(262_144).optional(),
    commandPreview: z.string().max(262_144).nullable().optional(),
    agentId: z.string().max(256).nullable().optional(),
    sessionKey: z.string().max(1024).nullable().optional(),
  })
  .loose();

const runInput = z.object({
  command: z
    .union([z.array(z.string().max(131_072)).min(1).max(4096), z.string().min(1).max(131_072)])
    .describe('argv array (runs without a shell), or a command-line string split on spaces with quotes honoured (shell syntax needs shell: true).'),
  cwd: z.string().min(1).max(4096).optional().describe("Working directory (absolute, or relative to the user's home); must exist. Default: the user's home directory."),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Variables set for the program, over a minimal base (PATH, HOME, USER, LANG, TERM, TZ, …; nothing else of the host). Every variable is part of what the user approves; code-loading ones (PATH, GIT_*, LD_*, NODE_*, PYTHON*, …) need the user\'s approval of that exact value.',
    ),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMER_MS)
    .nullable()
    .optional()
    .describe(`Kill the process tree after this many ms (at most ${MAX_RUN_TIMEOUT_MS}; null means the default). Default ${DEFAULT_RUN_TIMEOUT_MS}.`),
  maxOutputBytes: z.number().int().min(1).max(MAX_OUTPUT_LIMIT).optional().describe(`Bytes kept per stream (stdout, stderr); the rest is dropped with a marker. Default ${DEFAULT_MAX_OUTPUT_BYTES}.`),
  shell: z.boolean().optional().describe('Run the command string in the platform shell (/bin/sh, cmd.exe). Needs exec approvals mode \'full\' or the user\'s approval.'),
  systemRunPlan: systemRunPlanSchema
    .optional()
    .describe('The plan system.run.prepare returned (OpenClaw gateways send it): its argv and cwd run, and command/cwd must match them.'),
});

/** The structured result of `system.run`. */
export interface SystemRunResult {
  [key: string]: unknown;
  readonly command: string;
  readonly cwd: string;
  readonly pid: number | null;
  /** Exit code, `null` when the process was ended by a signal. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: { readonly stdout: boolean; readonly stderr: boolean };
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** Exited with code 0, not by a signal or the deadline (what OpenClaw's exec tool reads). */
  readonly success: boolean;
}

/** Where `system.run` runs a call without cwd: `options.defaultCwd`, else the user's home directory. */
function defaultRunCwd(options: BuiltinOptions): string {
  return options.defaultCwd ?? os.homedir();
}

/**
 * `system.run`: runs a program and returns its exit code, signal, stdout and stderr.
 *
 * An argv array runs without a shell; a string is split into argv by `splitCommandLine` unless
 * `shell: true`, which hands it to `/bin/sh -c` (POSIX) or `cmd.exe` (Windows). The program is
 * looked up on the host's PATH (never in cwd, and not on a PATH given in `env`), the same lookup the
 * exec approval hook matches against; when the hook resolved it, exactly that path runs, in the real
 * cwd the hook approved. A call without cwd runs in the user's home directory. The child starts from
 * a minimal environment (PATH, HOME, USER, LANG, TERM, TZ, … — see `buildChildEnv`) plus the
 * approved `env`; nothing else of the host's environment is passed on. A timeout or cancellation kills the whole process tree; the
 * call then returns what was captured with `timedOut: true` (timeout) or fails as cancelled. Progress
 * is reported every 500 ms (elapsed ms, message with bytes received). The result's `success` is true
 * for exit code 0 (OpenClaw's exec tool counts anything else as a failure). With `systemRunPlan` (from
 * `system.run.prepare`, as OpenClaw's agents send it), exactly the plan's argv runs in the plan's cwd.
 * Gateway fields beside it (`runId`, `approved`, `approvalDecision`, turn source) are accepted and
 * ignored: an approval given at the gateway never replaces this machine's own. Gated by exec approvals
 * (`approval: 'exec'`); it refuses to run when the invoker has no exec approval hook, so forgetting
 * the hook fails closed.
 */
export function createSystemRunCommand(options: BuiltinOptions = {}): CommandDefinition {
  return defineCommand({
    name: 'system.run',
    description:
      'Runs a program on this machine and returns exit code, stdout and stderr. Pass command as an argv array (preferred) or a command-line string; set shell: true for pipes, redirection or variables. Subject to the user\'s exec approval policy.',
    annotations: { title: 'Run a command', destructive: true, openWorld: true },
    approval: 'exec',
    input: runInput,
    async execute(args, ctx) {
      const launch = await approvedLaunch('system.run', args, ctx.request, { env: options.env ?? process.env, defaultCwd: defaultRunCwd(options) });
      const { cwd, env } = launch;
      const timeoutMs = Math.min(args.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS, MAX_RUN_TIMEOUT_MS);
      const result = await runProcess({
        file: launch.file,
        args: launch.args,
        shell: launch.shell,
        cwd,
        env,
        timeoutMs,
        maxOutputBytes: args.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
        signal: ctx.signal,
        onProgress: (status) =>
          ctx.progress({
            progress: Math.round(status.elapsedMs),
            message: `running for ${formatDuration(Math.round(status.elapsedMs))}; ${status.stdoutBytes} bytes on stdout, ${status.stderrBytes} on stderr`,
          }),
      });
      if (result.cancelled) throw new CapabilityError('cancelled', 'system.run was cancelled; the process tree was killed.');
      const structured: SystemRunResult = {
        command: launch.commandLine,
        cwd,
        pid: result.pid ?? null,
        exitCode: result.exitCode,
        signal: result.signal,
        stdout: result.stdout,
        stderr: result.stderr,
        truncated: result.truncated,
        timedOut: result.timedOut,
        durationMs: result.durationMs,
        success: result.exitCode === 0 && result.signal === null && !result.timedOut,
      };
      return json(structured);
    },
  });
}
