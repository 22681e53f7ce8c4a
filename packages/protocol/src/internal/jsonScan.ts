/** What a JSON token is, judged by its first character. */
export type JsonTokenKind = 'string' | 'number' | 'object' | 'array' | 'boolean' | 'null';

/** Where one JSON value sits in a text: `text.slice(start, end)` is its raw token. */
export interface JsonTokenSpan {
  readonly start: number;
  readonly end: number;
  readonly kind: JsonTokenKind;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Finds the raw token of the member at `path` (object keys from the root) without building any values.
 *
 * Keys are compared by their decoded value (`"\u0069d"` is `id`) and the last duplicate wins, as with
 * `JSON.parse`. The text is expected to be JSON that already parsed; anything the scanner cannot
 * follow yields `undefined`, never an exception.
 */
export function findMemberToken(text: string, path: readonly string[]): JsonTokenSpan | undefined {
  let position = skipWhitespace(text, 0);
  let span: JsonTokenSpan | undefined;
  for (const key of path) {
    if (text.charCodeAt(position) !== OPEN_BRACE) return undefined;
    span = findLastMember(text, position, key);
    if (span === undefined) return undefined;
    position = span.start;
  }
  return span;
}

function findLastMember(text: string, objectStart: number, key: string): JsonTokenSpan | undefined {
  let position = skipWhitespace(text, objectStart + 1);
  if (text.charCodeAt(position) === CLOSE_BRACE) return undefined;
  let found: JsonTokenSpan | undefined;
  for (;;) {
    if (text.charCodeAt(position) !== QUOTE) return undefined;
    const keyEnd = skipString(text, position);
    if (keyEnd < 0) return undefined;
    const matches = keyEquals(text, position, keyEnd, key);
    position = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(position) !== COLON) return undefined;
    position = skipWhitespace(text, position + 1);
    const valueEnd = skipValue(text, position);
    if (valueEnd < 0) return undefined;
    if (matches) {
      const kind = tokenKind(text.charCodeAt(position));
      if (kind === undefined) return undefined;
      found = { start: position, end: valueEnd, kind };
    }
    position = skipWhitespace(text, valueEnd);
    const separator = text.charCodeAt(position);
    if (separator === CLOSE_BRACE) return found;
    if (separator !== COMMA) return undefined;
    position = skipWhitespace(text, position + 1);
  }
}

function keyEquals(text: string, start: number, end: number, key: string): boolean {
  const rawLength = end - start - 2;
  if (rawLength === key.length) return text.startsWith(key, start + 1);
  if (rawLength < key.length) return false;
  const backslash = text.indexOf('\\', start + 1);
  if (backslash < 0 || backslash >= end) return false;
  try {
    return JSON.parse(text.slice(start, end)) === key;
  } catch {
    return false;
  }
}

/** Index just past the value starting at `start`, or -1. */
function skipValue(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return skipString(text, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return skipContainer(text, start);
  if (first === 0x74) return text.startsWith('true', start) ? start + 4 : -1;
  if (first === 0x66) return text.startsWith('false', start) ? start + 5 : -1;
  if (first === 0x6e) return text.startsWith('null', start) ? start + 4 : -1;
  let position = start;
  while (position < text.length && isNumberCharacter(text.charCodeAt(position))) position += 1;
  return position === start ? -1 : position;
}

function skipContainer(text: string, start: number): number {
  let depth = 0;
  let position = start;
  while (position < text.length) {
    const code = text.charCodeAt(position);
    if (code === QUOTE) {
      position = skipString(text, position);
      if (position < 0) return -1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0) return position + 1;
    }
    position += 1;
  }
  return -1;
}

/** Index just past the closing quote of the string starting at `start`, or -1. */
function skipString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function skipWhitespace(text: string, start: number): number {
  let position = start;
  while (position < text.length && isWhitespace(text.charCodeAt(position))) position += 1;
  return position;
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** Characters a JSON number token can contain (its grammar is checked where the lexeme is used). */
function isNumberCharacter(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x2b || code === 0x2e || code === 0x65 || code === 0x45;
}

function tokenKind(code: number): JsonTokenKind | undefined {
  if (code === QUOTE) return 'string';
  if (code === OPEN_BRACE) return 'object';
  if (code === OPEN_BRACKET) return 'array';
  if (code === 0x2d || (code >= 0x30 && code <= 0x39)) return 'number';
  if (code === 0x74 || code === 0x66) return 'boolean';
  if (code === 0x6e) return 'null';
  return undefined;
}
