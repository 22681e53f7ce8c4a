import { CapabilityError } from './errors.js';

/** Characters that mean something to a shell; outside quotes they are refused rather than passed on silently. */
const SHELL_OPERATORS = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`']);

function isSpace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f' || char === '\v';
}

/** One word of a command line as the scanner read it; see {@link scanCommandLine}. */
export interface ScannedWord {
  readonly value: string;
  /** Offsets in `value` of `*` characters written unquoted and unescaped (only in pattern mode). */
  readonly wildcards: readonly number[];
}

/**
 * The one command-line scanner behind {@link splitCommandLine} and exec allowlist patterns. In
 * pattern mode an unquoted `*` is recorded as a wildcard and `\*` outside quotes is a literal `*`;
 * otherwise both are ordinary characters.
 */
export function scanCommandLine(line: string, options: { readonly pattern?: boolean } = {}): ScannedWord[] {
  const pattern = options.pattern === true;
  const words: ScannedWord[] = [];
  let current = '';
  let wildcards: number[] = [];
  let inArgument = false;
  let index = 0;
  while (index < line.length) {
    const char = line[index]!;
    if (isSpace(char)) {
      if (inArgument) words.push({ value: current, wildcards });
      current = '';
      wildcards = [];
      inArgument = false;
      index += 1;
      continue;
    }
    inArgument = true;
    if (char === "'") {
      const end = line.indexOf("'", index + 1);
      if (end < 0) throw new CapabilityError('invalid_arguments', 'Command line has an unterminated single quote.');
      current += line.slice(index + 1, end);
      index = end + 1;
      continue;
    }
    if (char === '"') {
      index += 1;
      let closed = false;
      while (index < line.length) {
        const inner = line[index]!;
        if (inner === '\\' && line[index + 1] === '"') {
          current += '"';
          index += 2;
        } else if (inner === '"') {
          closed = true;
          index += 1;
          break;
        } else {
          current += inner;
          index += 1;
        }
      }
      if (!closed) throw new CapabilityError('invalid_arguments', 'Command line has an unterminated double quote.');
      continue;
    }
    if (char === '\\') {
      const next = line[index + 1];
      if (next !== undefined && (isSpace(next) || next === '"' || next === "'" || (pattern && next === '*'))) {
        current += next;
        index += 2;
        continue;
      }
    }
    if (SHELL_OPERATORS.has(char)) {
      throw new CapabilityError(
        'invalid_arguments',
        `Command line uses shell syntax ('${char}') outside quotes, which runs without a shell here: quote it, pass the command as an argv array, or set shell: true.`,
      );
    }
    if (pattern && char === '*') wildcards.push(current.length);
    current += char;
    index += 1;
  }
  if (inArgument) words.push({ value: current, wildcards });
  if (words.length === 0) throw new CapabilityError('invalid_arguments', 'Command line is empty.');
  return words;
}

/**
 * Splits a command-line string into argv without a shell.
 *
 * Rules (the same on every platform, so a line means one thing everywhere):
 * - whitespace separates arguments;
 * - `'…'` is literal; `"…"` is literal except that `\"` stands for `"`;
 * - outside quotes a backslash escapes only whitespace and quote characters; otherwise it is an
 *   ordinary character (Windows paths such as `C:\Users\me` need no doubling);
 * - quoted and unquoted parts next to each other join into one argument (`--name="a b"`);
 * - shell syntax (`| & ; < > ( ) $` and backquote) outside quotes is refused, because nothing here
 *   would interpret it: quote it, pass argv, or run the line with `shell: true`.
 *
 * @throws CapabilityError `invalid_arguments` for an empty line, an unterminated quote or shell syntax.
 * @example splitCommandLine(`git commit -m "fix: a b"`) // ['git', 'commit', '-m', 'fix: a b']
 */
export function splitCommandLine(line: string): string[] {
  return scanCommandLine(line).map((word) => word.value);
}

/**
 * Writes one word so that {@link splitCommandLine} (and the pattern scanner) reads it back
 * unchanged and literally: bare when it has only ordinary characters, else in single quotes, a `'`
 * inside written as `'"'"'`.
 */
export function quoteWord(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./~^!#{}\[\]-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'"'"'`)}'`;
}

function needsQuotes(arg: string): boolean {
  if (arg === '') return true;
  for (const char of arg) if (isSpace(char) || char === '"') return true;
  return false;
}

/**
 * Renders one argument of the normalized command line: bare when it has no whitespace or `"` and is
 * not empty, else in double quotes with `\` and `"` escaped by a backslash. Distinct argument lists
 * render to distinct strings, which exec allowlist matching relies on.
 */
export function formatArgument(arg: string): string {
  return needsQuotes(arg) ? `"${arg.replace(/[\\"]/g, (c) => `\\${c}`)}"` : arg;
}

/** Renders argv as the normalized command line shown in approvals and matched by allowlist patterns. */
export function formatCommandLine(argv: readonly string[]): string {
  return argv.map(formatArgument).join(' ');
}
