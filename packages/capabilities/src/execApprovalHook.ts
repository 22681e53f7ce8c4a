import type { ApprovalBroker } from './approvalBroker.js';
import { formatCommandLine, splitCommandLine } from './commandLine.js';
import { CapabilityError } from './errors.js';
import {
  evaluateExecPolicy,
  parseExecApprovalPolicy,
  patternForTarget,
  type ExecApprovalPolicy,
  type ExecApprovalStore,
  type ExecTarget,
} from './execPolicy.js';
import { askApproval, quoteForMessage } from './internal/askApproval.js';
import { markExecApproved } from './internal/execGate.js';
import type { Invocation, InvocationHook } from './pipeline.js';
import type { RegisteredCommand } from './registry.js';

/** Finds the absolute path of the program a command will run; `undefined` when it is not found. */
export type ExecutableResolver = (program: string, options: { readonly cwd?: string }) => string | undefined | Promise<string | undefined>;

export interface ExecApprovalHookOptions {
  readonly store: ExecApprovalStore;
  readonly broker: ApprovalBroker;
  /**
   * Resolves programs the way the exec command will (`findExecutable` from `@capnode/capabilities/node`).
   * Without it, path patterns only match programs given as absolute paths.
   */
  readonly resolveExecutable?: ExecutableResolver;
  /** Platform whose name rules apply (case, `.exe`); defaults to the current one. */
  readonly platform?: string;
}

/** An exec-gated call as the policy and the approval prompt see it. */
export interface ExecDescription {
  readonly target: ExecTarget;
  /** Normalized argv, or the shell line for `shell: true`. */
  readonly commandLine: string;
  readonly cwd?: string;
}

/** True for commands the exec policy gates: `system.run` and every command with `approval: 'exec'`. */
export function isExecGated(command: RegisteredCommand): boolean {
  return command.definition.approval === 'exec' || command.name.toLowerCase() === 'system.run';
}

/**
 * Reads the command an exec-gated command was asked to run from its arguments: `command` (argv
 * array, or a line split by {@link splitCommandLine}), `shell` and `cwd`.
 *
 * @throws CapabilityError `invalid_arguments` when the arguments carry no usable command.
 */
export function describeExecArgs(args: unknown): ExecDescription {
  const record = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  const { command, shell, cwd } = record;
  const cwdPart = typeof cwd === 'string' && cwd ? { cwd } : {};
  if (typeof command === 'string' && shell === true) {
    if (!command.trim()) throw new CapabilityError('invalid_arguments', 'command is empty.');
    return { target: { argv: [], shell: true }, commandLine: command, ...cwdPart };
  }
  if (shell === true) throw new CapabilityError('invalid_arguments', 'shell: true takes the command as one command-line string, not an argv array.');
  let argv: string[];
  if (typeof command === 'string') argv = splitCommandLine(command);
  else if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string')) argv = command as string[];
  else throw new CapabilityError('invalid_arguments', 'command must be a non-empty argv array of strings or a command-line string.');
  if (!argv[0]) throw new CapabilityError('invalid_arguments', 'The program name (command[0]) is empty.');
  return { target: { argv }, commandLine: formatCommandLine(argv), ...cwdPart };
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

/** Adds `pattern` to the stored allowlist unless it is there already. */
export async function addToAllowlist(store: ExecApprovalStore, pattern: string): Promise<void> {
  const policy = parseExecApprovalPolicy(await store.get());
  if (policy.allowlist.includes(pattern)) return;
  await store.set({ mode: policy.mode, allowlist: [...policy.allowlist, pattern] });
}

/**
 * Creates the hook that applies the exec approval policy to every exec-gated call (see
 * {@link isExecGated}) before it runs. The policy is read from `store` on every call.
 *
 * - `full` runs everything; `deny` refuses everything (`denied`);
 * - an allowlisted command runs in modes `ask` and `allowlist`;
 * - otherwise `allowlist` refuses (`denied`) and `ask` waits for the broker: `allow-once` runs it,
 *   `allow-always` also adds the exact command to the allowlist (shell lines are never added), `deny`
 *   refuses (`denied`), no answer in time refuses (`approval_timeout`).
 *
 * @example
 * const hook = createExecApprovalHook({ store, broker, resolveExecutable: findExecutable });
 * const invoker = createInvoker({ registry, hooks: [hook] });
 */
export function createExecApprovalHook(options: ExecApprovalHookOptions): InvocationHook {
  const { store, broker, resolveExecutable } = options;
  const matchOptions = options.platform === undefined ? {} : { platform: options.platform };
  return {
    async beforeInvoke(invocation: Invocation) {
      if (!isExecGated(invocation.command)) return;
      const name = invocation.command.name;
      const exec = describeExecArgs(invocation.args);
      let target = exec.target;
      if (!target.shell && resolveExecutable) {
        const resolvedPath = await resolveExecutable(target.argv[0]!, exec.cwd === undefined ? {} : { cwd: exec.cwd });
        if (resolvedPath !== undefined) target = { ...target, resolvedPath };
      }
      const policy = await loadPolicy(store);
      const verdict = evaluateExecPolicy(policy, target, matchOptions);
      const what = `${name} \`${quoteForMessage(exec.commandLine)}\``;
      if (verdict.verdict === 'allow') {
        markExecApproved(invocation.request);
        return;
      }
      if (verdict.verdict === 'deny') {
        switch (verdict.reason) {
          case 'deny':
            throw new CapabilityError('denied', `${what} is refused: exec approvals are in mode 'deny'. Change the mode (e.g. to 'ask') with system.execApprovals.set or in the host settings.`, {
              data: { mode: policy.mode },
            });
          case 'shell':
            throw new CapabilityError(
              'denied',
              `${what} is refused: shell command lines are never allowlisted (exec approvals mode 'allowlist'). Pass the command as argv without shell, or switch to mode 'ask' or 'full' with system.execApprovals.set.`,
              { data: { mode: policy.mode } },
            );
          default:
            throw new CapabilityError(
              'denied',
              `${what} is refused: it matches no exec allowlist pattern (exec approvals mode 'allowlist'). Add a pattern with system.execApprovals.set (e.g. ${patternHint(target)}) or switch to mode 'ask'.`,
              { data: { mode: policy.mode } },
            );
        }
      }
      const decision = await askApproval(
        broker,
        {
          command: name,
          commandLine: exec.commandLine,
          ...(target.shell ? { shell: true } : { argv: target.argv }),
          ...(exec.cwd === undefined ? {} : { cwd: exec.cwd }),
          ...(invocation.request.caller === undefined ? {} : { caller: invocation.request.caller }),
          transport: invocation.request.transport,
        },
        what,
        invocation,
      );
      if (decision === 'allow-always') {
        const pattern = patternForTarget(target, matchOptions);
        if (pattern !== undefined) await addToAllowlist(store, pattern);
      }
      markExecApproved(invocation.request);
    },
  };
}

/** A suggested `system.execApprovals.set` argument that allows the program with any arguments. */
function patternHint(target: ExecTarget): string {
  const program = target.argv[0] ?? 'program';
  const executable = /[/\\]/.test(program) ? (target.resolvedPath ?? program) : program;
  const quoted = /\s/.test(executable) ? `"${executable}"` : executable;
  return JSON.stringify({ add: [`${quoted} *`] });
}
