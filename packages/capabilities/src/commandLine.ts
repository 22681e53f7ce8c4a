import { CapabilityError } from './errors.js';

/** Characters that mean something to a shell; outside quotes they are refused rather than passed on silently. */
const SHELL_OPERATORS = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`']);

function isSpace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f' || char === '\v';
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
  const argv: string[] = [];
  let current = '';
  let inArgument = false;
  let index = 0;
  while (index < line.length) {
    const char = line[index]!;
    if (isSpace(char)) {
      if (inArgument) argv.push(current);
      current = '';
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
      if (next !== undefined && (isSpace(next) || next === '"' || next === "'")) {
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
    current += char;
    index += 1;
  }
  if (inArgument) argv.push(current);
  if (argv.length === 0) throw new CapabilityError('invalid_arguments', 'Command line is empty.');
  return argv;
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
