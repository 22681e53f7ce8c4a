/**
 * Characters that change how a line looks without being visible text: C0/C1 controls and DEL (a
 * carriage return or an ANSI escape can overwrite a prompt line), bidi embeddings, overrides and
 * isolates (they reorder what follows), zero-width characters and joiners, the BOM, and the
 * Unicode line and paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

function escapeOne(char: string): string {
  return NAMED[char] ?? `\\u{${char.codePointAt(0)!.toString(16).padStart(4, '0')}}`;
}

/**
 * Makes untrusted text safe to show a person on one line: every control, bidi and zero-width
 * character becomes a visible escape (`\n`, `\u{202e}`), and so does a backslash in front of one,
 * so escaped text cannot pass for another escape. Every human-facing rendering of caller-supplied
 * text (approval prompts, host log lines, notifications, the CLI) goes through this.
 *
 * @example
 * escapeForDisplay('ls\r\u001b[2Kgit status'); // 'ls\\r\\u{001b}[2Kgit status'
 */
export function escapeForDisplay(value: string): string {
  INVISIBLE.lastIndex = 0;
  if (!INVISIBLE.test(value)) return value;
  return value.replace(/\\(?=[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff])|[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, escapeOne);
}

/** True when `value` holds a character {@link escapeForDisplay} would escape. */
export function hasInvisibleCharacters(value: string): boolean {
  INVISIBLE.lastIndex = 0;
  return INVISIBLE.test(value);
}
