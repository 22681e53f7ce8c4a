import { describe, expect, it } from 'vitest';
import { escapeForDisplay, hasInvisibleCharacters } from './display.js';

describe('escapeForDisplay', () => {
  it('leaves ordinary text alone, including non-ASCII letters', () => {
    expect(escapeForDisplay('git status --short')).toBe('git status --short');
    expect(escapeForDisplay('café 日本 C:\\Tools')).toBe('café 日本 C:\\Tools');
  });

  it('escapes line breaks, carriage returns and ANSI escapes that could overwrite a prompt line', () => {
    expect(escapeForDisplay('ls\r\u001b[2Kgit status')).toBe('ls\\r\\u{001b}[2Kgit status');
    expect(escapeForDisplay('a\nb\tc')).toBe('a\\nb\\tc');
    expect(escapeForDisplay('\u0000\u007f\u009b')).toBe('\\u{0000}\\u{007f}\\u{009b}');
  });

  it('escapes bidi controls, zero-width characters, the BOM and Unicode line separators', () => {
    for (const char of ['\u202e', '\u2066', '\u2069', '\u200e', '\u061c', '\u200b', '\u200d', '\u2060', '\ufeff', '\u2028', '\u2029']) {
      const shown = escapeForDisplay(`x${char}y`);
      expect(shown).toBe(`x\\u{${char.codePointAt(0)!.toString(16).padStart(4, '0')}}y`);
      expect(hasInvisibleCharacters(shown)).toBe(false);
    }
  });

  it('escapes a backslash only where it precedes an escaped character, so output cannot imitate an escape', () => {
    expect(escapeForDisplay('\\\n')).toBe('\\\\\\n');
    expect(escapeForDisplay('\\u{000a}')).toBe('\\u{000a}');
  });

  it('is stable when called twice (the global regex keeps no state between calls)', () => {
    expect(escapeForDisplay('a\nb')).toBe('a\\nb');
    expect(escapeForDisplay('a\nb')).toBe('a\\nb');
    expect(hasInvisibleCharacters('plain')).toBe(false);
    expect(hasInvisibleCharacters('pl\u200bain')).toBe(true);
  });

  it('escapes the other characters that render as nothing or as blank: soft hyphen, grapheme joiner, Hangul fillers, variation selectors, interlinear annotations and tag characters', () => {
    for (const char of ['\u00ad', '\u034f', '\u115f', '\u1160', '\u17b4', '\u17b5', '\u3164', '\uffa0', '\ufe00', '\ufe0f', '\ufff9', '\ufffb', '\u{e0001}', '\u{e0041}', '\u{e007f}', '\u{e0100}']) {
      const shown = escapeForDisplay(`x${char}y`);
      expect(shown, JSON.stringify(char)).toBe(`x\\u{${char.codePointAt(0)!.toString(16).padStart(4, '0')}}y`);
      expect(hasInvisibleCharacters(`x${char}y`)).toBe(true);
      expect(hasInvisibleCharacters(shown)).toBe(false);
    }
    // An argument that looks like `status` but carries hidden tag characters is shown as different.
    expect(escapeForDisplay('status\u{e0020}\u{e0072}')).toBe('status\\u{e0020}\\u{e0072}');
  });
});
