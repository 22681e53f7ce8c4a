import { z } from 'zod';
import { quoteWord, scanCommandLine, type ScannedWord } from './commandLine.js';
import { isCodeLoadingEnvKey } from './envPolicy.js';
import { CapabilityError } from './errors.js';

/**
 * How `system.run` (and every command with `approval: 'exec'`) is gated:
 * - `deny`: nothing runs;
 * - `ask` (default): calls an allowlist entry covers run, every other one waits for the user's answer;
 * - `allowlist`: covered calls run, every other one is refused without asking;
 * - `full`: everything runs, shell command lines included, except calls setting code-loading
 *   environment variables no entry recorded with that exact value: those ask.
 */
export type ExecApprovalMode = 'deny' | 'ask' | 'allowlist' | 'full';

const MAX_PATTERN_LENGTH = 1024;

/**
 * OpenClaw's `{ security, ask }` for a capnode exec approval mode: what `system.run.prepare` reports
 * and the gateway's exec approvals snapshot shows, so both say the same.
 */
export function execPolicyForMode(mode: ExecApprovalMode): { readonly security: 'deny' | 'allowlist' | 'full'; readonly ask: 'off' | 'on-miss' } {
  switch (mode) {
    case 'deny':
      return { security: 'deny', ask: 'off' };
    case 'allowlist':
      return { security: 'allowlist', ask: 'off' };
    case 'full':
      return { security: 'full', ask: 'off' };
    default:
      return { security: 'allowlist', ask: 'on-miss' };
  }
}

/** Upper bound on allowlist entries, so a settings file cannot make every call slow. */
export const MAX_ALLOWLIST_ENTRIES = 1000;
const MAX_SCOPE_ENV_KEYS = 64;
const EXECUTABLE_EXTENSIONS = /\.(exe|com|bat|cmd)$/i;

/** What one argument position of a pattern accepts: exactly this text, or any one argument. */
export type ExecArgumentMatcher = { readonly kind: 'literal'; readonly value: string } | { readonly kind: 'any' };

/** An allowlist pattern split into its parts; see {@link parseExecPattern}. */
export interface ExecPattern {
  readonly source: string;
  /** The program as written: a bare name, or a path when it contains `/` or `\`. */
  readonly executable: string;
  readonly isPath: boolean;
  /** One matcher per argument, in order. */
  readonly args: readonly ExecArgumentMatcher[];
  /** True when the pattern ends in `*`: any further arguments (none included) are allowed. */
  readonly rest: boolean;
}

/**
 * Parses an allowlist pattern.
 *
 * Grammar — a pattern is read like a command line (the quoting of {@link splitCommandLine}):
 * 1. It splits into tokens at unquoted whitespace; `'…'` is literal, `"…"` is literal except `\"`,
 *    a backslash outside quotes escapes whitespace, a quote or `*`. Shell syntax (`| & ; < > ( ) $`
 *    and backquote) outside quotes is refused, as in a command line.
 * 2. Token 1 is the program. A bare name (`git`) matches only a program the call names bare and
 *    that is found through PATH (`./git` or `/tmp/git` never match `git`); a token with `/` or `\`
 *    (`/usr/bin/ls`, `'C:\Program Files\Git\git.exe'`) matches the resolved absolute path. It never
 *    contains `*`. On Windows programs compare case-insensitively and `.exe`, `.com`, `.bat`, `.cmd`
 *    may be left off.
 * 3. Every further token matches exactly one argument, literally (no regular expressions, no
 *    partial matches): `git status` allows `git status` only.
 * 4. A token that is exactly an unquoted `*` matches any one argument in the middle
 *    (`git * --dry-run` allows `git push --dry-run`, not `git push origin --dry-run`), and zero or
 *    more further arguments as the last token (`npm *` allows `npm` and `npm run build`).
 * 5. `\*`, `'*'` or `"*"` is a literal star: `echo \*` allows only the argument `*`.
 * 6. Legacy form: a last token ending in an unquoted `*` (`git status*`) reads as that word followed
 *    by `*` (`git status *`): it allows `git status` and `git status --short`, never `git statusx`.
 * 7. Any other unquoted `*` inside a token (`a*b`, `*.ts` in the middle, `st*tus`) is an error.
 *
 * A pattern only describes argv: shell command lines (`shell: true`) are never matched, and the
 * cwd and environment a call may use are the entry's scope (see {@link ExecAllowlistScope}).
 *
 * @throws CapabilityError `invalid_arguments` with the reason.
 */
export function parseExecPattern(source: string): ExecPattern {
  const pattern = source.trim();
  const invalid = (reason: string) => new CapabilityError('invalid_arguments', `Invalid exec allowlist pattern '${pattern.slice(0, 80)}': ${reason}`);
  if (!pattern) throw invalid('it is empty.');
  if (pattern.length > MAX_PATTERN_LENGTH) throw invalid(`it is longer than ${MAX_PATTERN_LENGTH} characters.`);
  let words: ScannedWord[];
  try {
    words = scanCommandLine(pattern, { pattern: true });
  } catch (error) {
    throw invalid(((error as Error).message.replace(/^Command line/, 'it')));
  }
  const program = words[0]!;
  if (!program.value) throw invalid('the program is empty.');
  if (program.value.includes('*')) throw invalid("the program cannot contain '*'; use mode 'full' to allow every program.");
  const args: ExecArgumentMatcher[] = [];
  let rest = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    const last = index === words.length - 1;
    if (word.wildcards.length === 0) {
      args.push({ kind: 'literal', value: word.value });
    } else if (word.value === '*') {
      if (last) rest = true;
      else args.push({ kind: 'any' });
    } else if (last && word.wildcards.length === 1 && word.wildcards[0] === word.value.length - 1) {
      args.push({ kind: 'literal', value: word.value.slice(0, -1) });
      rest = true;
    } else {
      throw invalid(
        `'*' inside the argument '${word.value.slice(0, 40)}' is not supported: '*' must be a whole token (one argument, or as the last token any further arguments); write \\* or quote it for a literal star.`,
      );
    }
  }
  return { source: pattern, executable: program.value, isPath: /[/\\]/.test(program.value), args, rest };
}

function matchArguments(pattern: ExecPattern, args: readonly string[]): boolean {
  if (args.length < pattern.args.length) return false;
  if (!pattern.rest && args.length !== pattern.args.length) return false;
  return pattern.args.every((matcher, index) => matcher.kind === 'any' || matcher.value === args[index]);
}

/** The program a command runs, as the policy sees it. */
export interface ExecTarget {
  /** argv as it will run; `argv[0]` is the program as the caller named it. */
  readonly argv: readonly string[];
  /** Absolute path of the program when it was resolved (PATH search, or a path relative to cwd). */
  readonly resolvedPath?: string;
  /** A command line for a shell (`shell: true`); the allowlist never matches these. */
  readonly shell?: boolean;
  /**
   * The working directory the call asked for, as a real absolute path (symlinks resolved).
   * Absent when the call gives none and runs in the default directory (the user's home).
   */
  readonly cwd?: string;
  /** Every variable the call sets for the child, with its exact value. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Platform-dependent comparison rules; defaults to the current platform. */
export interface ExecMatchOptions {
  readonly platform?: string;
}

function currentPlatform(): string {
  return (globalThis as { process?: { platform?: string } }).process?.platform ?? 'unknown';
}

function isWindows(options: ExecMatchOptions): boolean {
  return (options.platform ?? currentPlatform()) === 'win32';
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

/**
 * True when `pattern` allows the program and argv of `target` (see {@link parseExecPattern}).
 * Shell command lines never match. Scope (cwd, env) is not looked at here: see {@link allowlistEntryCovers}.
 */
export function matchesExecPattern(pattern: string | ExecPattern, target: ExecTarget, options: ExecMatchOptions = {}): boolean {
  if (target.shell || target.argv.length === 0) return false;
  const parsed = typeof pattern === 'string' ? parseExecPattern(pattern) : pattern;
  const windows = isWindows(options);
  const program = target.argv[0]!;
  if (parsed.isPath) {
    if (!sameProgram(parsed.executable, target.resolvedPath ?? program, windows)) return false;
  } else {
    // A bare name only matches a program found through PATH: `./git` must not pass as `git`.
    if (hasPathSeparator(program, windows)) return false;
    if (!sameProgram(parsed.executable, baseName(target.resolvedPath ?? program), windows)) return false;
  }
  return matchArguments(parsed, target.argv.slice(1));
}

/**
 * The pattern that allows exactly `target`'s program and argv again, every argument literal.
 * Returns `undefined` for shell command lines, which are never allowlisted.
 */
export function patternForTarget(target: ExecTarget, options: ExecMatchOptions = {}): string | undefined {
  if (target.shell || target.argv.length === 0) return undefined;
  const program = target.argv[0]!;
  const executable = hasPathSeparator(program, isWindows(options)) ? (target.resolvedPath ?? program) : program;
  if (executable.includes('*')) return undefined;
  return [executable, ...target.argv.slice(1)].map(quoteWord).join(' ');
}

/**
 * An allowlist entry with its scope. It covers a call only when all of these hold:
 * - `pattern` matches the program and argv;
 * - the call sets no environment variable, or exactly the variables and values of `env`;
 * - with `cwd`: the call gives a cwd whose real path (symlinks resolved) is `cwd` or inside it;
 *   without `cwd`: the call gives no cwd (it runs in the default directory, the user's home).
 *
 * Programs that execute configuration found in their working directory (git hooks and
 * `core.fsmonitor`, make, npm scripts, direnv, …) are as powerful as that directory: an entry for
 * them is only as safe as every directory its scope covers.
 */
export interface ExecAllowlistScope {
  readonly pattern: string;
  /** Absolute directory the call's cwd must be inside. */
  readonly cwd?: string | undefined;
  /** Exact variables the call may set. */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/** A persisted allowlist entry: a bare pattern (no cwd, no env) or a scoped one. */
export type ExecAllowlistEntry = string | ExecAllowlistScope;

const DOT_SEGMENT = /(^|[/\\])\.\.?([/\\]|$)/;

function isAbsoluteDirectory(value: string): boolean {
  return value.startsWith('/') || /^[A-Za-z]:[/\\]/.test(value) || value.startsWith('\\\\');
}

/**
 * True when the absolute path `cwd` is `scope` or inside it. Both must be absolute and free of `.`
 * and `..` segments (anything else is never inside); Windows compares case-insensitively. Symlinks
 * are the caller's business: give real paths.
 */
export function isInsideCwdScope(cwd: string, scope: string, options: ExecMatchOptions = {}): boolean {
  if (!isAbsoluteDirectory(cwd) || !isAbsoluteDirectory(scope)) return false;
  if (DOT_SEGMENT.test(cwd) || DOT_SEGMENT.test(scope) || cwd.includes('\0')) return false;
  const windows = isWindows(options);
  const sep = windows ? '\\' : '/';
  const normalize = (value: string) => {
    let out = windows ? value.replace(/\//g, '\\').toLowerCase() : value;
    out = out.replace(windows ? /\\{2,}/g : /\/{2,}/g, sep);
    while (out.length > 1 && out.endsWith(sep) && !(windows && /^[a-z]:\\$/.test(out))) out = out.slice(0, -1);
    return out;
  };
  const have = normalize(cwd);
  const want = normalize(scope);
  return have === want || have.startsWith(want.endsWith(sep) ? want : want + sep);
}

/** The object form of an entry. */
export function toAllowlistScope(entry: ExecAllowlistEntry): ExecAllowlistScope {
  return typeof entry === 'string' ? { pattern: entry } : entry;
}

function sameEnv(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const left = Object.entries(a ?? {});
  const right = b ?? {};
  return left.length === Object.keys(right).length && left.every(([key, value]) => Object.hasOwn(right, key) && right[key] === value);
}

/** True when two entries mean the same thing (same pattern text, cwd and env). */
export function sameAllowlistEntry(a: ExecAllowlistEntry, b: ExecAllowlistEntry): boolean {
  const left = toAllowlistScope(a);
  const right = toAllowlistScope(b);
  return left.pattern.trim() === right.pattern.trim() && left.cwd === right.cwd && sameEnv(left.env, right.env);
}

/** True when `entry` covers `target`: pattern, env and cwd scope (see {@link ExecAllowlistScope}). */
export function allowlistEntryCovers(entry: ExecAllowlistEntry, target: ExecTarget, options: ExecMatchOptions = {}): boolean {
  const scope = toAllowlistScope(entry);
  let parsed: ExecPattern;
  try {
    parsed = parseExecPattern(scope.pattern);
  } catch {
    return false;
  }
  if (!matchesExecPattern(parsed, target, options)) return false;
  if (target.env && Object.keys(target.env).length > 0 && !sameEnv(target.env, scope.env)) return false;
  if (scope.cwd === undefined) return target.cwd === undefined;
  return target.cwd !== undefined && isInsideCwdScope(target.cwd, scope.cwd, options);
}

/**
 * The entry "allow always" records for `target`: its exact pattern, its cwd as the scope and its
 * exact env, if any; a bare string when it has neither. `undefined` for shell command lines.
 */
export function entryForTarget(target: ExecTarget, options: ExecMatchOptions = {}): ExecAllowlistEntry | undefined {
  const pattern = patternForTarget(target, options);
  if (pattern === undefined) return undefined;
  const env = target.env && Object.keys(target.env).length > 0 ? { env: { ...target.env } } : {};
  if (target.cwd === undefined && !('env' in env)) return pattern;
  return { pattern, ...(target.cwd === undefined ? {} : { cwd: target.cwd }), ...env };
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

/** zod schema for an allowlist entry: a pattern string, or `{ pattern, cwd?, env? }`. */
export const execAllowlistEntrySchema = z.union([
  execPatternSchema,
  z.strictObject({
    pattern: execPatternSchema,
    cwd: z
      .string()
      .max(4096)
      .refine(isAbsoluteDirectory, 'cwd must be an absolute path')
      .refine((value) => !DOT_SEGMENT.test(value) && !value.includes('\0'), "cwd may not contain '.' or '..' segments")
      .optional(),
    env: z
      .record(z.string().min(1), z.string())
      .refine((value) => Object.keys(value).length <= MAX_SCOPE_ENV_KEYS, `env holds at most ${MAX_SCOPE_ENV_KEYS} variables`)
      .optional(),
  }),
]);

export const execApprovalModeSchema = z.enum(['deny', 'ask', 'allowlist', 'full']);

/** zod schema of the persisted exec approval policy; missing fields take their defaults. */
export const execApprovalPolicySchema = z.object({
  mode: execApprovalModeSchema.default('ask'),
  allowlist: z.array(execAllowlistEntrySchema).max(MAX_ALLOWLIST_ENTRIES).default([]),
});

/** The exec approval policy as the host persists it in its settings. */
export interface ExecApprovalPolicy {
  readonly mode: ExecApprovalMode;
  readonly allowlist: readonly ExecAllowlistEntry[];
}

/** The policy used when nothing is configured: ask for everything not allowlisted. */
export const DEFAULT_EXEC_APPROVAL_POLICY: ExecApprovalPolicy = Object.freeze({ mode: 'ask', allowlist: Object.freeze([]) as readonly ExecAllowlistEntry[] });

/** What the policy says about one command, before anyone is asked. */
export type ExecVerdict =
  | { readonly verdict: 'allow'; readonly reason: 'full' | 'allowlist'; readonly pattern?: string }
  | { readonly verdict: 'deny'; readonly reason: 'deny' | 'not_allowlisted' | 'shell'; readonly codeLoadingEnv?: readonly string[] }
  | { readonly verdict: 'deny'; readonly reason: 'code_env'; readonly codeLoadingEnv: readonly string[] }
  | { readonly verdict: 'ask'; readonly codeLoadingEnv?: readonly string[] };

/** Keys of `env` that can load code ({@link isCodeLoadingEnvKey}), in their order. */
export function codeLoadingEnvKeys(env: Readonly<Record<string, string>> | undefined): string[] {
  return Object.keys(env ?? {}).filter(isCodeLoadingEnvKey);
}

/**
 * Applies a policy to a command without side effects; the exec approval hook acts on the verdict.
 *
 * - `deny`: refused.
 * - An entry that covers the call ({@link allowlistEntryCovers}: pattern, env, cwd scope) allows it
 *   in modes `ask`, `allowlist` and `full`. Shell command lines are never covered.
 * - `full`: everything else runs too, except calls that set a code-loading variable
 *   ({@link isCodeLoadingEnvKey}) no entry recorded with that exact value: those ask.
 * - `allowlist`: everything else is refused; `code_env` names the code-loading keys when the call set any.
 * - `ask`: everything else asks.
 */
export function evaluateExecPolicy(policy: ExecApprovalPolicy, target: ExecTarget, options: ExecMatchOptions = {}): ExecVerdict {
  if (policy.mode === 'deny') return { verdict: 'deny', reason: 'deny' };
  const codeKeys = codeLoadingEnvKeys(target.env);
  const withKeys = codeKeys.length ? { codeLoadingEnv: codeKeys } : {};
  if (!target.shell) {
    for (const entry of policy.allowlist) {
      if (allowlistEntryCovers(entry, target, options)) return { verdict: 'allow', reason: 'allowlist', pattern: toAllowlistScope(entry).pattern.trim() };
    }
  }
  if (policy.mode === 'full') return codeKeys.length ? { verdict: 'ask', codeLoadingEnv: codeKeys } : { verdict: 'allow', reason: 'full' };
  if (policy.mode === 'allowlist') {
    if (codeKeys.length) return { verdict: 'deny', reason: 'code_env', codeLoadingEnv: codeKeys };
    return { verdict: 'deny', reason: target.shell ? 'shell' : 'not_allowlisted' };
  }
  return { verdict: 'ask', ...withKeys };
}

/**
 * Where the exec approval policy lives. The host implements it over its settings file; every read
 * goes through `get`, so an edit takes effect on the next call.
 */
export interface ExecApprovalStore {
  get(): ExecApprovalPolicy | Promise<ExecApprovalPolicy>;
  set(policy: ExecApprovalPolicy): Promise<void>;
  /**
   * Applies `change` to the policy current at that moment, atomically with respect to other
   * updates; optional (without it, {@link updateExecApprovalPolicy} reads with `get` and writes with `set`).
   */
  update?(change: (current: ExecApprovalPolicy) => ExecApprovalPolicy): Promise<ExecApprovalPolicy>;
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
  const allowlist = parsed.data.allowlist.map((entry): ExecAllowlistEntry => {
    if (typeof entry === 'string') return entry;
    return { pattern: entry.pattern, ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }), ...(entry.env === undefined ? {} : { env: entry.env }) };
  });
  return { mode: parsed.data.mode, allowlist };
}

/**
 * Applies `change` to the policy current when it runs (never to an earlier copy), through the
 * store's `update` when it has one; returns the stored policy.
 */
export async function updateExecApprovalPolicy(store: ExecApprovalStore, change: (current: ExecApprovalPolicy) => ExecApprovalPolicy): Promise<ExecApprovalPolicy> {
  const apply = (current: ExecApprovalPolicy) => parseExecApprovalPolicy(change(parseExecApprovalPolicy(current)));
  if (store.update) return store.update(apply);
  const next = apply(await store.get());
  await store.set(next);
  return next;
}

function copyPolicy(policy: ExecApprovalPolicy): ExecApprovalPolicy {
  return { mode: policy.mode, allowlist: policy.allowlist.map((entry) => (typeof entry === 'string' ? entry : { ...entry, ...(entry.env ? { env: { ...entry.env } } : {}) })) };
}

/** An in-memory {@link ExecApprovalStore} for tests and hosts without settings. */
export function createMemoryExecApprovalStore(initial: Partial<ExecApprovalPolicy> = {}): ExecApprovalStore {
  let policy = parseExecApprovalPolicy(initial);
  return {
    get: () => copyPolicy(policy),
    async set(next) {
      policy = parseExecApprovalPolicy(next);
    },
    async update(change) {
      policy = parseExecApprovalPolicy(change(copyPolicy(policy)));
      return copyPolicy(policy);
    },
  };
}
