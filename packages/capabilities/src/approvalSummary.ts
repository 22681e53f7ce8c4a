import type { PendingApproval } from './approvalBroker.js';
import { escapeForDisplay } from './display.js';

/** Characters of the argument hash shown to people (enough to tell requests apart, short enough to compare). */
export const ARGS_HASH_PREFIX_LENGTH = 12;

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** Longest caller name shown; the name is a self-reported label, not part of what runs. */
const MAX_CALLER_CHARS = 120;

/** The caller name, cut to {@link MAX_CALLER_CHARS} with its full length said, so a name cannot flood a prompt. */
function shortCaller(caller: string): string {
  const chars = [...caller];
  return chars.length <= MAX_CALLER_CHARS ? caller : `${chars.slice(0, MAX_CALLER_CHARS).join('')}… (${chars.length} characters)`;
}

/** An env key as shown: bare when it is a plain name, else JSON-quoted, so a key cannot pass for several variables. */
function displayKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key);
}

/** The argument hash as shown to people: its first {@link ARGS_HASH_PREFIX_LENGTH} characters. */
export function argsHashPrefix(argsHash: string): string {
  const bare = argsHash.replace(/^sha256:/, '');
  return escapeForDisplay(bare.slice(0, ARGS_HASH_PREFIX_LENGTH));
}

/**
 * The whole truth about a pending approval, one escaped line per field, as every human-facing
 * rendering shows it (host log, `capnode approvals list|watch`, desktop notification, the question
 * put through the client): what runs (program and resolved path, argv or the shell line), cwd,
 * every environment key (secret values arrive masked), shell, timeout, transport, the caller marked
 * as self-reported, the argument hash prefix, and for a file change its diff, line by line. Caller-supplied text goes through
 * {@link escapeForDisplay}, so no line can be overwritten, reordered or hidden.
 *
 * @example
 * formatApprovalSummary(approval).join('\n');
 */
export function formatApprovalSummary(approval: PendingApproval): string[] {
  const lines: string[] = [];
  const what = approval.summary ?? approval.commandLine;
  lines.push(`${escapeForDisplay(approval.command)}: ${escapeForDisplay(what)}`);
  if (!approval.shell && approval.argv && approval.argv.length > 0) {
    const program = escapeForDisplay(approval.argv[0]!);
    lines.push(`program: ${program}${approval.resolvedPath ? ` → ${escapeForDisplay(approval.resolvedPath)}` : ' (not resolved)'}`);
    lines.push(`argv: ${escapeForDisplay(JSON.stringify(approval.argv))}`);
  } else if (approval.resolvedPath) {
    lines.push(`program: ${escapeForDisplay(approval.resolvedPath)}`);
  }
  if (approval.shell !== undefined || approval.argv !== undefined) lines.push(`shell: ${approval.shell ? 'yes (the line runs in a shell)' : 'no'}`);
  if (approval.cwd !== undefined) lines.push(`cwd: ${escapeForDisplay(approval.cwd)}`);
  if (approval.env !== undefined) {
    const entries = Object.entries(approval.env);
    lines.push(`env: ${entries.length === 0 ? '(none)' : entries.map(([key, value]) => `${escapeForDisplay(displayKey(key))}=${escapeForDisplay(JSON.stringify(value))}`).join(' ')}`);
  } else if (approval.argv !== undefined || approval.shell !== undefined) {
    lines.push('env: (none set by the caller)');
  }
  if (approval.timeoutMs !== undefined) lines.push(`timeout: ${seconds(approval.timeoutMs)}`);
  if (approval.transport !== undefined) lines.push(`transport: ${approval.transport}`);
  if (approval.client !== undefined) lines.push(`client: ${escapeForDisplay(shortCaller(approval.client))} (its token's name)`);
  lines.push(`caller: ${approval.caller === undefined ? '(unnamed)' : `${escapeForDisplay(shortCaller(approval.caller))} (self-reported)`}`);
  if (approval.argsHash !== undefined) lines.push(`hash: ${argsHashPrefix(approval.argsHash)}`);
  if (approval.diff !== undefined) lines.push(...diffLines(approval.diff));
  return lines;
}

/** Most diff lines a summary shows; the rest are counted. */
const MAX_SHOWN_DIFF_LINES = 200;

/** The diff as summary lines: a `diff:` header, then each line indented and escaped, at most {@link MAX_SHOWN_DIFF_LINES}. */
function diffLines(diff: string): string[] {
  const all = diff.replace(/\n$/, '').split('\n');
  const shown = all.slice(0, MAX_SHOWN_DIFF_LINES).map((line) => `  ${escapeForDisplay(line)}`);
  if (all.length > MAX_SHOWN_DIFF_LINES) shown.push(`  … (${all.length - MAX_SHOWN_DIFF_LINES} more diff lines)`);
  return ['diff:', ...shown];
}

/** How much of long strings and arrays is shown: generous first, tighter when that is still too long. */
const DISPLAY_BUDGETS: readonly { readonly head: number; readonly tail: number; readonly items: number }[] = [
  { head: 48, tail: 96, items: 20 },
  { head: 16, tail: 48, items: 5 },
];

export interface FormatArgsOptions {
  /** Longest text returned. Default 1000. */
  readonly maxChars?: number;
  /** Applied to every string (keys too) before it is shortened, e.g. a secret scrubber. */
  readonly mapString?: (text: string) => string;
}

/**
 * Arguments as an approval shows them: JSON in which no long part can push another out of sight.
 * A long string is shown by its head and tail with its length (a padded path still shows where it
 * ends), a long array by its first items and a count; when that is still over `maxChars`, tighter,
 * and only then cut. Not escaped: whoever renders it escapes it. The argument hash binds the full
 * arguments, so what runs is what was hashed, and this is what the person saw of it.
 */
export function formatArgsForDisplay(args: unknown, options: FormatArgsOptions = {}): string {
  const maxChars = options.maxChars ?? 1000;
  const map = options.mapString ?? ((text: string) => text);
  let text = '{…}';
  for (const budget of DISPLAY_BUDGETS) {
    const shorten = (value: unknown, depth: number): unknown => {
      if (typeof value === 'string') {
        const mapped = map(value);
        return mapped.length > budget.head + budget.tail + 16 ? `${mapped.slice(0, budget.head)}…(${mapped.length} characters)…${mapped.slice(-budget.tail)}` : mapped;
      }
      if (typeof value !== 'object' || value === null) return value;
      if (depth > 4) return '{…}';
      if (Array.isArray(value)) {
        const shown = value.slice(0, budget.items).map((item) => shorten(item, depth + 1));
        return value.length > budget.items ? [...shown, `…(${value.length - budget.items} more)`] : shown;
      }
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [shorten(key, depth) as string, shorten(item, depth + 1)]));
    };
    try {
      text = JSON.stringify(shorten(args ?? {}, 0)) ?? '{}';
    } catch {
      return '{…}';
    }
    if (text.length <= maxChars) return text;
  }
  return `${text.slice(0, maxChars)}… (${text.length} characters)`;
}
