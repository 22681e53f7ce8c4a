import { z } from 'zod';
import { formatCommandLine } from './commandLine.js';
import { CapabilityError } from './errors.js';

/**
 * How `system.run` (and every command with `approval: 'exec'`) is gated:
 * - `deny`: nothing runs;
 * - `ask` (default): allowlisted commands run, every other one waits for the user's answer;
 * - `allowlist`: allowlisted commands run, every other one is refused without asking;
 * - `full`: everything runs, shell command lines included.
 */
export type ExecApprovalMode = 'deny' | 'ask' | 'allowlist' | 'full';

const MAX_PATTERN_LENGTH = 1024;
/** Upper bound on allowlist entries, so a settings file cannot make every call slow. */
export const MAX_ALLOWLIST_ENTRIES = 1000;
const EXECUTABLE_EXTENSIONS = /\.(exe|com|bat|cmd)$/i;

/** An allowlist pattern split into its parts; see {@link parseExecPattern}. */
export interface ExecPattern {
  readonly source: string;
  /** The program as written: a bare name, or a path when it contains `/` or `\`. */
  readonly executable: string;
  readonly isPath: boolean;
  /** Argument glob segments between `*` wildcards; `undefined` means "no arguments". */
  readonly args: readonly string[] | undefined;
}

/**
 * Parses an allowlist pattern.
 *
 * Grammar: `<program> [<argument glob>]`.
 * - `<program>` is a bare name (`git`) matching a program found through PATH, or a path
 *   (`/usr/bin/ls`, `C:\Tools\rg.exe`) matching the resolved absolute path. Put it in double quotes
 *   when it contains spaces. It never contains `*`. On Windows names compare case-insensitively and
 *   `.exe`, `.com`, `.bat`, `.cmd` may be left off.
 * - `<argument glob>` is matched against the arguments in their normalized form (see
 *   {@link formatCommandLine}): `*` matches any run of characters, spaces included; `\*` matches a
 *   literal `*`; every other character matches itself. No regular expressions.
 * - Without an argument glob the pattern allows the program only without arguments; `npm *`
 *   allows any arguments (including none); `git status*` allows `git status` and `git status --short`.
 *
 * @throws CapabilityError `invalid_arguments` with the reason.
 */
export function parseExecPattern(source: string): ExecPattern {
  const pattern = source.trim();
  const invalid = (reason: string) => new CapabilityError('invalid_arguments', `Invalid exec allowlist pattern '${pattern.slice(0, 80)}': ${reason}`);
  if (!pattern) throw invalid('it is empty.');
  if (pattern.length > MAX_PATTERN_LENGTH) throw invalid(`it is longer than ${MAX_PATTERN_LENGTH} characters.`);
  let executable: string;
  let rest: string;
  if (pattern.startsWith('"')) {
    const end = pattern.indexOf('"', 1);
    if (end < 0) throw invalid('the quoted program has no closing quote.');
    executable = pattern.slice(1, end);
    rest = pattern.slice(end + 1);
    if (rest && !/^\s/.test(rest)) throw invalid('the quoted program must be followed by a space.');
  } else {
    const match = /^(\S+)(.*)$/s.exec(pattern)!;
    executable = match[1]!;
    rest = match[2]!;
    if (executable.includes('"')) throw invalid('quote the whole program, not part of it.');
  }
  if (!executable) throw invalid('the program is empty.');
  if (executable.includes('*')) throw invalid("the program cannot contain '*'; use mode 'full' to allow every program.");
  const glob = rest.trim();
  return {
    source: pattern,
    executable,
    isPath: /[/\\]/.test(executable),
    args: glob ? splitGlob(glob) : undefined,
  };
}

/** Splits a glob at unescaped `*`; `\*` becomes a literal `*` inside a segment. */
function splitGlob(glob: string): string[] {
  const segments: string[] = [];
  let current = '';
  for (let index = 0; index < glob.length; index += 1) {
    const char = glob[index]!;
    if (char === '\\' && glob[index + 1] === '*') {
      current += '*';
      index += 1;
    } else if (char === '*') {
      segments.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  segments.push(current);
  return segments;
}

/** Matches `value` against glob segments (split at `*`) without regular expressions. */
function matchGlob(segments: readonly string[], value: string): boolean {
  if (segments.length === 1) return value === segments[0];
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  let position = first.length;
  const end = value.length - last.length;
  for (let index = 1; index < segments.length - 1; index += 1) {
    const segment = segments[index]!;
    const found = value.indexOf(segment, position);
    if (found < 0 || found + segment.length > end) return false;
    position = found + segment.length;
  }
  return true;
}

/** The program a command runs, as the policy sees it. */
export interface ExecTarget {
  /** argv as it will run; `argv[0]` is the program as the caller named it. */
  readonly argv: readonly string[];
  /** Absolute path of the program when it was resolved (PATH search, or a path relative to cwd). */
  readonly resolvedPath?: string;
  /** A command line for a shell (`shell: true`); the allowlist never matches these. */
  readonly shell?: boolean;
}

/** Platform-dependent comparison rules; defaults to the current platform. */
export interface ExecMatchOptions {
  readonly platform?: string;
}

function currentPlatform(): string {
  return (globalThis as { process?: { platform?: string } }).process?.platform ?? 'unknown';
}

function hasPathSeparator(value: string, windows: boolean): boolean {
  return value.includes('/') || (windows && value.includes('\\'));
}

function baseName(value: string): string {
  const parts = value.split(/[/\\]/);
  return parts[parts.length - 1] ?? value;
}

function sameProgram(pattern: string, actual: string, windows: boolean): boolean {
  if (!windows) return pattern === actual;
  const normalize = (value: string) => value.replace(/\//g, '\\').toLowerCase();
  const want = normalize(pattern);
  const have = normalize(actual);
  if (want === have) return true;
  return !EXECUTABLE_EXTENSIONS.test(want) && have.replace(EXECUTABLE_EXTENSIONS, '') === want;
}

/** True when `pattern` allows `target`. Shell command lines never match. */
export function matchesExecPattern(pattern: string | ExecPattern, target: ExecTarget, options: ExecMatchOptions = {}): boolean {
  if (target.shell || target.argv.length === 0) return false;
  const parsed = typeof pattern === 'string' ? parseExecPattern(pattern) : pattern;
  const windows = (options.platform ?? currentPlatform()) === 'win32';
  const program = target.argv[0]!;
  if (parsed.isPath) {
    if (!sameProgram(parsed.executable, target.resolvedPath ?? program, windows)) return false;
  } else {
    // A bare name only matches a program found through PATH: `./git` must not pass as `git`.
    if (hasPathSeparator(program, windows)) return false;
    if (!sameProgram(parsed.executable, baseName(target.resolvedPath ?? program), windows)) return false;
  }
  const args = formatCommandLine(target.argv.slice(1));
  return parsed.args === undefined ? args === '' : matchGlob(parsed.args, args);
}

/** Escapes `*` so the text matches itself in an argument glob. */
function escapeGlob(value: string): string {
  return value.replace(/\*/g, '\\*');
}

/**
 * The pattern that allows exactly `target` again: what "allow always" adds to the allowlist.
 * Returns `undefined` for shell command lines, which are never allowlisted.
 */
export function patternForTarget(target: ExecTarget, options: ExecMatchOptions = {}): string | undefined {
  if (target.shell || target.argv.length === 0) return undefined;
  const windows = (options.platform ?? currentPlatform()) === 'win32';
  const program = target.argv[0]!;
  const executable = hasPathSeparator(program, windows) ? (target.resolvedPath ?? program) : program;
  const quoted = /\s/.test(executable) ? `"${executable}"` : executable;
  const args = formatCommandLine(target.argv.slice(1));
  return args ? `${quoted} ${escapeGlob(args)}` : quoted;
}

/** zod schema for an allowlist pattern; rejects what {@link parseExecPattern} rejects. */
export const execPatternSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    try {
      parseExecPattern(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
    }
  });

export const execApprovalModeSchema = z.enum(['deny', 'ask', 'allowlist', 'full']);

/** zod schema of the persisted exec approval policy; missing fields take their defaults. */
export const execApprovalPolicySchema = z.object({
  mode: execApprovalModeSchema.default('ask'),
  allowlist: z.array(execPatternSchema).max(MAX_ALLOWLIST_ENTRIES).default([]),
});

/** The exec approval policy as the host persists it in its settings. */
export interface ExecApprovalPolicy {
  readonly mode: ExecApprovalMode;
  readonly allowlist: readonly string[];
}

/** The policy used when nothing is configured: ask for everything not allowlisted. */
export const DEFAULT_EXEC_APPROVAL_POLICY: ExecApprovalPolicy = Object.freeze({ mode: 'ask', allowlist: Object.freeze([]) as readonly string[] });

/** What the policy says about one command, before anyone is asked. */
export type ExecVerdict =
  | { readonly verdict: 'allow'; readonly reason: 'full' | 'allowlist'; readonly pattern?: string }
  | { readonly verdict: 'deny'; readonly reason: 'deny' | 'not_allowlisted' | 'shell' }
  | { readonly verdict: 'ask' };

/**
 * Applies a policy to a command without side effects; the exec approval hook acts on the verdict.
 * Shell command lines are never matched by the allowlist: in mode `allowlist` they are refused, in
 * mode `ask` they always ask.
 */
export function evaluateExecPolicy(policy: ExecApprovalPolicy, target: ExecTarget, options: ExecMatchOptions = {}): ExecVerdict {
  if (policy.mode === 'full') return { verdict: 'allow', reason: 'full' };
  if (policy.mode === 'deny') return { verdict: 'deny', reason: 'deny' };
  if (!target.shell) {
    for (const pattern of policy.allowlist) {
      let parsed: ExecPattern;
      try {
        parsed = parseExecPattern(pattern);
      } catch {
        continue;
      }
      if (matchesExecPattern(parsed, target, options)) return { verdict: 'allow', reason: 'allowlist', pattern: parsed.source };
    }
  }
  if (policy.mode === 'allowlist') return { verdict: 'deny', reason: target.shell ? 'shell' : 'not_allowlisted' };
  return { verdict: 'ask' };
}

/**
 * Where the exec approval policy lives. The host implements it over its settings file; every read
 * goes through `get`, so an edit takes effect on the next call.
 */
export interface ExecApprovalStore {
  get(): ExecApprovalPolicy | Promise<ExecApprovalPolicy>;
  set(policy: ExecApprovalPolicy): Promise<void>;
}

/** Validates a policy (defaults filled in, patterns checked). @throws CapabilityError `invalid_arguments`. */
export function parseExecApprovalPolicy(value: unknown): ExecApprovalPolicy {
  const parsed = execApprovalPolicySchema.safeParse(value ?? {});
  if (!parsed.success) {
    const detail = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
      .join('; ');
    throw new CapabilityError('invalid_arguments', `Invalid exec approval policy: ${detail}`);
  }
  return parsed.data;
}

/** An in-memory {@link ExecApprovalStore} for tests and hosts without settings. */
export function createMemoryExecApprovalStore(initial: Partial<ExecApprovalPolicy> = {}): ExecApprovalStore {
  let policy = parseExecApprovalPolicy(initial);
  return {
    get: () => ({ mode: policy.mode, allowlist: [...policy.allowlist] }),
    async set(next) {
      policy = parseExecApprovalPolicy(next);
    },
  };
}
