import { describe, expect, it } from 'vitest';
import { isProtocolFormatError } from './errors.js';
import { isJsonNumberLexeme, normalizeJsonNumber } from './jsonNumber.js';

describe('normalizeJsonNumber', () => {
  it.each([
    ['0', '0'],
    ['-0', '0'],
    ['0.000', '0'],
    ['0e999999999999999999999', '0'],
    ['-0.0E-5', '0'],
    ['1', '1'],
    ['1.0', '1'],
    ['1e0', '1'],
    ['1E+0', '1'],
    ['10E-1', '1'],
    ['0.1e1', '1'],
    ['100e-2', '1'],
    ['-25e2', '-2500'],
    ['120', '120'],
    ['1.20e2', '120'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
    ['1.23456789012345678901234567890e29', '123456789012345678901234567890'],
    ['9007199254740993', '9007199254740993'],
    ['1.5', '1.5e0'],
    ['1.50', '1.5e0'],
    ['-1.5', '-1.5e0'],
    ['0.001', '1e-3'],
    ['0.0012', '1.2e-3'],
    ['12.5e-3', '1.25e-2'],
    ['1e400', '1e400'],
    ['-1e400', '-1e400'],
    ['1e-400', '1e-400'],
    ['1e64', '1e64'],
    ['1e63', `1${'0'.repeat(63)}`],
    ['12e62', `12${'0'.repeat(62)}`],
    ['12e63', '1.2e64'],
    ['1e99999999999999999999999', '1e99999999999999999999999'],
    ['5e-99999999999999999999999', '5e-99999999999999999999999'],
  ])('%s → %s', (lexeme, canonical) => {
    expect(normalizeJsonNumber(lexeme)).toBe(canonical);
  });

  it('gives one form to every spelling of a value and distinct forms to distinct values', () => {
    /** Spellings of digits × 10^exponent. */
    const spellings = (digits: string, exponent: number): string[] => [
      `${digits}e${exponent}`,
      `${digits[0]}.${digits.slice(1) || '0'}e${exponent + digits.length - 1}`,
      `0.${digits}e${exponent + digits.length}`,
      `${digits}.000E${exponent}`,
      `${digits}0e${exponent - 1}`,
    ];
    const seen = new Map<string, string>();
    for (const digits of ['1', '15', '105', '123456789012345678901234567890', '7']) {
      for (let exponent = -70; exponent <= 70; exponent += 7) {
        const forms = spellings(digits, exponent).map(normalizeJsonNumber);
        expect(new Set(forms).size, `${digits} e${exponent}: ${forms.join(' ')}`).toBe(1);
        const value = `${digits}@${exponent}`;
        const previous = seen.get(forms[0] as string);
        expect(previous === undefined || previous === value, `${value} collides with ${previous}`).toBe(true);
        seen.set(forms[0] as string, value);
      }
    }
  });

  it('agrees with the double for every lexeme a double prints exactly', () => {
    for (const value of [0, 1, -1, 0.5, 1e21, 1e-7, 123.456, 2 ** 53, -(2 ** 60), 5e-324, 1.7976931348623157e308]) {
      expect(Number(normalizeJsonNumber(String(value))), String(value)).toBe(value);
    }
  });

  it('rejects lexemes outside the JSON number grammar', () => {
    for (const lexeme of ['', '-', '+1', '01', '00', '.5', '5.', '1e', '1e+', '1.e3', '0x10', 'NaN', 'Infinity', ' 1', '1 ', '1_000', '--1']) {
      expect(isJsonNumberLexeme(lexeme), lexeme).toBe(false);
      let error: unknown;
      try {
        normalizeJsonNumber(lexeme);
      } catch (caught) {
        error = caught;
      }
      expect(isProtocolFormatError(error) && error.code, lexeme).toBe('invalid_number_lexeme');
    }
    expect(() => normalizeJsonNumber('1x')).toThrow(/Not a JSON number: "1x"/);
  });
});
