/**
 * Characters that change how a line looks without being visible text: C0/C1 controls and DEL (a
 * carriage return or an ANSI escape can overwrite a prompt line), bidi embeddings, overrides and
 * isolates (they reorder what follows), zero-width characters and joiners, the BOM, the Unicode
 * line and paragraph separators, and characters that render as nothing or as blank: the soft
 * hyphen, the combining grapheme joiner, Hangul and Khmer fillers, variation selectors,
 * interlinear annotation marks and the tag characters (U+E0000–U+E007F, "ASCII smuggling").
 */
const INVISIBLE_CLASS =
  '[\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb\\u{e0000}-\\u{e007f}\\u{e0100}-\\u{e01ef}]';
const INVISIBLE = new RegExp(INVISIBLE_CLASS, 'u');
const ESCAPED = new RegExp(`\\\\(?=${INVISIBLE_CLASS})|${INVISIBLE_CLASS}`, 'gu');

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

function escapeOne(char: string): string {
  return NAMED[char] ?? `\\u{${char.codePointAt(0)!.toString(16).padStart(4, '0')}}`;
}

/**
 * Makes untrusted text safe to show a person on one line: every control, bidi, zero-width or
 * otherwise invisible character becomes a visible escape (`\n`, `\u{202e}`, `\u{e0041}`), and so
 * does a backslash in front of one, so escaped text cannot pass for another escape. Every
 * human-facing rendering of caller-supplied text (approval prompts, host log lines, notifications,
 * the CLI) goes through this.
 *
 * @example
 * escapeForDisplay('ls\r\u001b[2Kgit status'); // 'ls\\r\\u{001b}[2Kgit status'
 */
export function escapeForDisplay(value: string): string {
  if (!INVISIBLE.test(value)) return value;
  return value.replace(ESCAPED, escapeOne);
}

/** True when `value` holds a character {@link escapeForDisplay} would escape. */
export function hasInvisibleCharacters(value: string): boolean {
  return INVISIBLE.test(value);
}
