import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { InvocationRequest } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { describeExecArgs } from '../execApprovalHook.js';
import { buildChildEnv } from './childEnv.js';
import { approvedExec } from './execGate.js';
import { findExecutable } from './which.js';

/** What an exec-gated command starts: exactly what the exec approval hook approved. */
export interface ApprovedLaunch {
  /** Absolute program path, or the command line when `shell` is true. */
  readonly file: string;
  readonly args: readonly string[];
  readonly shell: boolean;
  /** The real working directory. */
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** The normalized argv, or the shell line, as the user was shown it. */
  readonly commandLine: string;
}

/** Where and with what the launch happens when the call says nothing. */
export interface LaunchDefaults {
  /** The environment whose PATH finds programs and whose base set children inherit. */
  readonly env: NodeJS.ProcessEnv;
  /** Where calls without cwd run, and the base of relative ones. */
  readonly defaultCwd: string;
}

/**
 * The real path of a working directory: `requested` (absolute, or relative to `base`) with every
 * symlink resolved.
 *
 * @throws CapabilityError `invalid_arguments` when it does not exist or is not a directory.
 */
export async function resolveWorkingDirectory(requested: string | undefined, base: string): Promise<string> {
  const cwd = path.resolve(base, requested ?? '.');
  let real: string;
  try {
    real = await realpath(cwd);
  } catch {
    throw new CapabilityError('invalid_arguments', `cwd '${cwd}' does not exist.`);
  }
  const info = await stat(real).catch(() => undefined);
  if (!info) throw new CapabilityError('invalid_arguments', `cwd '${cwd}' does not exist.`);
  if (!info.isDirectory()) throw new CapabilityError('invalid_arguments', `cwd '${cwd}' is not a directory.`);
  return real;
}

function sameEnv(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const left = Object.entries(a ?? {});
  return left.length === Object.keys(b ?? {}).length && left.every(([key, value]) => b?.[key] === value);
}

/**
 * Turns the arguments of an exec-gated call (`command`, `shell`, `cwd`, `env`) into what runs: the
 * program the hook resolved (else found on the host's PATH, never in cwd), the real cwd the hook
 * approved, and a minimal environment plus the approved `env`.
 *
 * @throws CapabilityError `denied` when the exec approval hook never saw the request (no hook: fail
 *   closed) or the env differs from what it approved; `failed` when the program is not found.
 */
export async function approvedLaunch(name: string, args: unknown, request: InvocationRequest, defaults: LaunchDefaults): Promise<ApprovedLaunch> {
  const approved = approvedExec(request);
  if (!approved) {
    throw new CapabilityError('denied', `${name} refuses to run: the invoker has no exec approval hook. Add createExecApprovalHook({ store, broker }) to the invoker's hooks.`);
  }
  const windows = process.platform === 'win32';
  const exec = describeExecArgs(args);
  if (!sameEnv(exec.env, approved.env)) throw new CapabilityError('denied', `${name} refuses to run: its env differs from what the exec policy approved.`);
  const cwd = approved.cwd ?? (await resolveWorkingDirectory(exec.cwd, defaults.defaultCwd));
  const env = buildChildEnv(defaults.env, exec.env, windows);
  if (exec.target.shell) return { file: exec.commandLine, args: [], shell: true, cwd, env, commandLine: exec.commandLine };
  const program = exec.target.argv[0]!;
  const resolved = approved.resolvedPath ?? (await findExecutable(program, { cwd, env: defaults.env }));
  if (resolved === undefined) {
    throw new CapabilityError('failed', `Program '${program}' was not found${/[/\\]/.test(program) ? '' : ' on PATH'} or is not executable.`);
  }
  if (windows && /\.(bat|cmd)$/i.test(resolved)) {
    throw new CapabilityError('unsupported', `'${path.basename(resolved)}' is a batch file, which Windows only runs through cmd.exe: pass the command as a string with shell: true.`);
  }
  return { file: resolved, args: exec.target.argv.slice(1), shell: false, cwd, env, commandLine: exec.commandLine };
}
