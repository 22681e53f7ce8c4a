import type { ApprovalBroker, ApprovalRequestInput } from './approvalBroker.js';
import { formatCommandLine, splitCommandLine } from './commandLine.js';
import { maskEnvForDisplay } from './envPolicy.js';
import { CapabilityError } from './errors.js';
import {
  evaluateExecPolicy,
  entryForTarget,
  parseExecApprovalPolicy,
  parseExecPattern,
  matchesExecPattern,
  sameAllowlistEntry,
  updateExecApprovalPolicy,
  type ExecAllowlistEntry,
  type ExecApprovalPolicy,
  type ExecApprovalStore,
  type ExecTarget,
  type ExecVerdict,
} from './execPolicy.js';
import { askApproval, quoteForMessage } from './internal/askApproval.js';
import { hashInvocationArgs } from './internal/argsHash.js';
import { markExecApproved } from './internal/execGate.js';
import type { Invocation, InvocationHook } from './pipeline.js';
import type { RegisteredCommand } from './registry.js';

/** Finds the absolute path of the program a command will run; `undefined` when it is not found. */
export type ExecutableResolver = (program: string, options: { readonly cwd?: string }) => string | undefined | Promise<string | undefined>;

/**
 * Turns a call's `cwd` (absolute, or relative to the default directory) into its real absolute path
 * with every symlink resolved; throws `CapabilityError` `invalid_arguments` when it is not a directory.
 */
export type WorkingDirectoryResolver = (cwd: string) => string | Promise<string>;

export interface ExecApprovalHookOptions {
  readonly store: ExecApprovalStore;
  readonly broker: ApprovalBroker;
  /**
   * Resolves programs the way the exec command will (`findExecutable` from `@capnode/capabilities/node`).
   * Without it, path patterns only match programs given as absolute paths.
   */
  readonly resolveExecutable?: ExecutableResolver;
  /**
   * Resolves a call's cwd to its real path (`createNodeExecResolvers` from
   * `@capnode/capabilities/node`). Without it no call that gives a cwd is covered by the allowlist.
   */
  readonly resolveCwd?: WorkingDirectoryResolver;
  /** Where calls without cwd run (shown in the prompt, base for relative programs). */
  readonly defaultCwd?: string;
  /** Platform whose name rules apply (case, `.exe`); defaults to the current one. */
  readonly platform?: string;
}

/** An exec-gated call as the policy and the approval prompt see it. */
export interface ExecDescription {
  readonly target: ExecTarget;
  /** Normalized argv, or the shell line for `shell: true`. */
  readonly commandLine: string;
  /** The cwd as the call gave it. */
  readonly cwd?: string;
  /** The variables the call sets, exact values. */
  readonly env?: Readonly<Record<string, string>>;
  /** The call's own deadline, in ms. */
  readonly timeoutMs?: number;
}

/** True for commands the exec policy gates: `system.run` and every command with `approval: 'exec'`. */
export function isExecGated(command: RegisteredCommand): boolean {
  return command.definition.approval === 'exec' || command.name.toLowerCase() === 'system.run';
}

function readEnvArgument(env: unknown): Readonly<Record<string, string>> | undefined {
  if (env === undefined) return undefined;
  if (typeof env !== 'object' || env === null || Array.isArray(env)) throw new CapabilityError('invalid_arguments', 'env must be an object of string values.');
  const entries = Object.entries(env);
  if (entries.some(([, value]) => typeof value !== 'string')) throw new CapabilityError('invalid_arguments', 'env must be an object of string values.');
  // Checked before anyone is asked: a prompt must never show a variable the process could not hold.
  for (const [key, value] of entries as [string, string][]) {
    if (!key || key.includes('=') || key.includes('\0')) throw new CapabilityError('invalid_arguments', `env has an invalid variable name '${key.replace(/\0/g, '\\0')}'.`);
    if (value.includes('\0')) throw new CapabilityError('invalid_arguments', `env value of ${key} contains a NUL character.`);
  }
  return entries.length ? Object.fromEntries(entries) as Record<string, string> : undefined;
}

function sameArgv(a: readonly unknown[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((part, index) => part === b[index]);
}

/**
 * The arguments with a prepared plan (`systemRunPlan`, from `system.run.prepare`) applied: the plan's
 * argv and cwd are what runs. A `command` or `cwd` given beside the plan must say the same, so what
 * was prepared (and shown for approval) is exactly what runs.
 */
function planned(record: Record<string, unknown>): Record<string, unknown> {
  const plan = record.systemRunPlan;
  if (plan === undefined || plan === null) return record;
  if (typeof plan !== 'object' || Array.isArray(plan)) throw new CapabilityError('invalid_arguments', 'systemRunPlan must be the plan object system.run.prepare returned.');
  const { argv, cwd } = plan as { argv?: unknown; cwd?: unknown };
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((part) => typeof part === 'string')) {
    throw new CapabilityError('invalid_arguments', 'systemRunPlan.argv must be a non-empty argv array of strings.');
  }
  if (cwd !== undefined && cwd !== null && (typeof cwd !== 'string' || !cwd)) throw new CapabilityError('invalid_arguments', 'systemRunPlan.cwd must be a non-empty string.');
  if (record.shell === true) throw new CapabilityError('invalid_arguments', 'shell: true cannot be combined with systemRunPlan; the plan is an argv.');
  if (record.command !== undefined && !(Array.isArray(record.command) && sameArgv(record.command, argv as string[]))) {
    throw new CapabilityError('invalid_arguments', 'command differs from systemRunPlan.argv; run exactly what system.run.prepare returned.');
  }
  const planCwd = typeof cwd === 'string' ? cwd : undefined;
  if (record.cwd !== undefined && record.cwd !== planCwd) throw new CapabilityError('invalid_arguments', 'cwd differs from systemRunPlan.cwd; run exactly what system.run.prepare returned.');
  const next: Record<string, unknown> = { ...record, command: [...(argv as string[])] };
  if (planCwd === undefined) delete next.cwd;
  else next.cwd = planCwd;
  return next;
}

/**
 * Reads the command an exec-gated command was asked to run from its arguments: `command` (argv
 * array, or a line split by {@link splitCommandLine}), `shell`, `cwd`, `env` and `timeoutMs`; with a
 * `systemRunPlan` (from `system.run.prepare`), its argv and cwd, which `command` and `cwd` must match.
 *
 * @throws CapabilityError `invalid_arguments` when the arguments carry no usable command.
 */
export function describeExecArgs(args: unknown): ExecDescription {
  const record = planned((typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>);
  const { command, shell, cwd, timeoutMs } = record;
  const env = readEnvArgument(record.env);
  const extra = {
    ...(typeof cwd === 'string' && cwd ? { cwd } : {}),
    ...(env ? { env } : {}),
    ...(typeof timeoutMs === 'number' ? { timeoutMs } : {}),
  };
  if (typeof command === 'string' && shell === true) {
    if (!command.trim()) throw new CapabilityError('invalid_arguments', 'command is empty.');
    return { target: { argv: [], shell: true }, commandLine: command, ...extra };
  }
  if (shell === true) throw new CapabilityError('invalid_arguments', 'shell: true takes the command as one command-line string, not an argv array.');
  let argv: string[];
  if (typeof command === 'string') argv = splitCommandLine(command);
  else if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string')) argv = command as string[];
  else throw new CapabilityError('invalid_arguments', 'command must be a non-empty argv array of strings or a command-line string.');
  if (!argv[0]) throw new CapabilityError('invalid_arguments', 'The program name (command[0]) is empty.');
  return { target: { argv }, commandLine: formatCommandLine(argv), ...extra };
}

async function loadPolicy(store: ExecApprovalStore): Promise<ExecApprovalPolicy> {
  let raw: unknown;
  try {
    raw = await store.get();
  } catch (error) {
    throw new CapabilityError('denied', 'Exec approvals could not be read, so no command runs until they can.', { cause: error });
  }
  try {
    return parseExecApprovalPolicy(raw);
  } catch (error) {
    throw new CapabilityError('denied', 'The exec approval settings are invalid, so no command runs; fix or reset them in the host settings.', { cause: error });
  }
}

/** Adds `entry` to the stored allowlist unless an equal entry is there already; applied to the policy current at that moment. */
export async function addToAllowlist(store: ExecApprovalStore, entry: ExecAllowlistEntry): Promise<void> {
  await updateExecApprovalPolicy(store, (policy) =>
    policy.allowlist.some((existing) => sameAllowlistEntry(existing, entry)) ? policy : { mode: policy.mode, allowlist: [...policy.allowlist, entry] },
  );
}

/**
 * The policy with every cwd scope replaced by its real path, keeping only the scoped entries that
 * can cover `target` at all (a scope that no longer exists covers nothing).
 */
async function resolveScopes(policy: ExecApprovalPolicy, target: ExecTarget, resolveCwd: WorkingDirectoryResolver | undefined, platform: { platform?: string }): Promise<ExecApprovalPolicy> {
  const allowlist = await Promise.all(
    policy.allowlist.map(async (entry): Promise<ExecAllowlistEntry | undefined> => {
      if (typeof entry === 'string' || entry.cwd === undefined) return entry;
      if (target.cwd === undefined || !resolveCwd) return undefined;
      try {
        if (!matchesExecPattern(parseExecPattern(entry.pattern), target, platform)) return undefined;
        return { ...entry, cwd: await resolveCwd(entry.cwd) };
      } catch {
        return undefined;
      }
    }),
  );
  return { mode: policy.mode, allowlist: allowlist.filter((entry): entry is ExecAllowlistEntry => entry !== undefined) };
}

function refusal(verdict: Extract<ExecVerdict, { verdict: 'deny' }>, what: string, target: ExecTarget, mode: string): CapabilityError {
  const data = { mode, reason: verdict.reason, ...(verdict.codeLoadingEnv ? { envKeys: [...verdict.codeLoadingEnv] } : {}) };
  switch (verdict.reason) {
    case 'deny':
      return new CapabilityError('denied', `${what} is refused: exec approvals are in mode 'deny'. Change the mode (e.g. to 'ask') with system.execApprovals.set or in the host settings.`, { data });
    case 'shell':
      return new CapabilityError(
        'denied',
        `${what} is refused: shell command lines are never allowlisted (exec approvals mode 'allowlist'). Pass the command as argv without shell, or switch to mode 'ask' or 'full' with system.execApprovals.set.`,
        { data },
      );
    case 'code_env':
      return new CapabilityError(
        'denied',
        `${what} is refused: env sets ${verdict.codeLoadingEnv.join(', ')}, which can make programs run other code, and no allowlist entry records ${verdict.codeLoadingEnv.length === 1 ? 'that exact value' : 'those exact values'} (exec approvals mode 'allowlist' never asks). Leave them out, or switch to mode 'ask' so the user can approve them.`,
        { data },
      );
    default:
      return new CapabilityError(
        'denied',
        `${what} is refused: no exec allowlist entry covers it (pattern, cwd scope and env; exec approvals mode 'allowlist'). Add an entry with system.execApprovals.set (e.g. ${patternHint(target)}) or switch to mode 'ask'.`,
        { data },
      );
  }
}

/**
 * Creates the hook that applies the exec approval policy to every exec-gated call (see
 * {@link isExecGated}) before it runs. The policy is read from `store` on every call; the inputs
 * are the resolved program path, argv, the real cwd, every env variable and `shell`.
 *
 * - `deny` refuses everything (`denied`);
 * - a covering allowlist entry (pattern, cwd scope, env: see `ExecAllowlistScope`) runs the call in
 *   modes `ask`, `allowlist` and `full`;
 * - otherwise `full` runs it, unless it sets a code-loading variable (`isCodeLoadingEnvKey`), which asks;
 *   `allowlist` refuses (`denied`, naming the code-loading keys when there are any); `ask` waits for
 *   the broker: `allow-once` runs it, `allow-always` also records the exact call (pattern, its real
 *   cwd as the scope, its exact env; shell lines are never recorded), `deny` refuses (`denied`), no
 *   answer in time refuses (`approval_timeout`). When the mode became `deny` while the prompt was
 *   open, an approval no longer runs anything.
 *
 * The command then runs exactly what was approved: the resolved program, the real cwd, the env.
 *
 * @example
 * const hook = createExecApprovalHook({ store, broker, ...createNodeExecResolvers() });
 * const invoker = createInvoker({ registry, hooks: [hook] });
 */
export function createExecApprovalHook(options: ExecApprovalHookOptions): InvocationHook {
  const { store, broker, resolveExecutable, resolveCwd, defaultCwd } = options;
  const matchOptions = options.platform === undefined ? {} : { platform: options.platform };
  const enforce = {
    async beforeInvoke(invocation: Invocation) {
      if (!isExecGated(invocation.command)) return;
      const name = invocation.command.name;
      const exec = describeExecArgs(invocation.args);
      const realCwd = exec.cwd !== undefined && resolveCwd ? await resolveCwd(exec.cwd) : undefined;
      let target: ExecTarget = { ...exec.target, ...(exec.cwd === undefined ? {} : { cwd: realCwd ?? exec.cwd }), ...(exec.env ? { env: exec.env } : {}) };
      if (!target.shell && resolveExecutable) {
        const base = realCwd ?? (exec.cwd === undefined ? defaultCwd : undefined);
        const resolvedPath = await resolveExecutable(target.argv[0]!, base === undefined ? {} : { cwd: base });
        if (resolvedPath !== undefined) target = { ...target, resolvedPath };
      }
      const policy = await loadPolicy(store);
      // Without a real path, a call with a cwd could slip into a scope through a symlink: nothing covers it.
      const scoped = exec.cwd !== undefined && realCwd === undefined ? { mode: policy.mode, allowlist: [] } : await resolveScopes(policy, target, resolveCwd, matchOptions);
      const verdict = evaluateExecPolicy(scoped, target, matchOptions);
      const what = `${name} \`${quoteForMessage(exec.commandLine)}\``;
      const approved = { ...(target.resolvedPath === undefined ? {} : { resolvedPath: target.resolvedPath }), ...(realCwd === undefined ? {} : { cwd: realCwd }), ...(exec.env ? { env: exec.env } : {}) };
      if (verdict.verdict === 'allow') {
        markExecApproved(invocation.request, approved);
        return;
      }
      if (verdict.verdict === 'deny') throw refusal(verdict, what, target, policy.mode);
      const shownCwd = realCwd ?? exec.cwd ?? defaultCwd;
      const request: ApprovalRequestInput = {
        command: name,
        commandLine: exec.commandLine,
        ...(target.shell ? { shell: true } : { argv: target.argv }),
        ...(shownCwd === undefined ? {} : { cwd: shownCwd }),
        ...(target.resolvedPath === undefined ? {} : { resolvedPath: target.resolvedPath }),
        ...(exec.env ? { env: maskEnvForDisplay(exec.env) } : {}),
        ...(exec.timeoutMs === undefined ? {} : { timeoutMs: exec.timeoutMs }),
        // Bound to what the user is shown, resolved: a retry whose cwd or program now resolves to
        // another real path (a symlink swapped after the answer) is a new request.
        argsHash: await hashInvocationArgs(name, { args: invocation.args, resolved: { program: target.resolvedPath ?? null, cwd: realCwd ?? null } }),
        ...(verdict.codeLoadingEnv ? { summary: `sets variables that can make programs run other code: ${verdict.codeLoadingEnv.join(', ')}` } : {}),
        ...(invocation.request.caller === undefined ? {} : { caller: invocation.request.caller }),
        ...(invocation.request.client === undefined ? {} : { client: invocation.request.client }),
        transport: invocation.request.transport,
      };
      const decision = await askApproval(broker, request, what, invocation);
      const now = await loadPolicy(store);
      if (now.mode === 'deny') {
        throw new CapabilityError('denied', `${what} did not run: exec approvals were switched to mode 'deny' while its approval was pending.`, { data: { mode: now.mode, reason: 'deny' } });
      }
      if (decision === 'allow-always') {
        // A cwd that could not be resolved to a real path is never recorded as a scope.
        const entry = exec.cwd !== undefined && realCwd === undefined ? undefined : entryForTarget(target, matchOptions);
        if (entry !== undefined) await addToAllowlist(store, entry);
      }
      markExecApproved(invocation.request, approved);
    },
  };
  // Commands that run no program pass at once, with no promise on their path.
  return { beforeInvoke: (invocation) => (isExecGated(invocation.command) ? enforce.beforeInvoke(invocation) : undefined) };
}

/** A suggested `system.execApprovals.set` argument that allows the program with any arguments. */
function patternHint(target: ExecTarget): string {
  const program = target.argv[0] ?? 'program';
  const executable = /[/\\]/.test(program) ? (target.resolvedPath ?? program) : program;
  const quoted = /\s/.test(executable) ? `'${executable}'` : executable;
  return JSON.stringify({ add: [target.cwd === undefined ? `${quoted} *` : { pattern: `${quoted} *`, cwd: target.cwd }] });
}
