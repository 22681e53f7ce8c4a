import { ProtocolFormatError } from './errors.js';

const NUMBER_LEXEME = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Integers with at most this many digits keep their plain form; everything else is written in scientific form. */
const MAX_PLAIN_INTEGER_DIGITS = 64;

/** True when `text` is exactly one JSON number token (RFC 8259 grammar: no `+`, no leading zeros, no bare `.`). */
export function isJsonNumberLexeme(text: string): boolean {
  return NUMBER_LEXEME.test(text);
}

/**
 * The canonical decimal form of a JSON number lexeme, computed on its digits (no floating point), so
 * two lexemes give the same string exactly when they denote the same mathematical value.
 *
 * - zero in any spelling (`0`, `-0`, `0.00`, `0e7`) is `"0"`;
 * - an integer of at most 64 digits is written plainly: `"1.0"` → `"1"`, `"10E-1"` → `"1"`,
 *   `"123456789012345678901234567890"` stays as it is, `"-25e2"` → `"-2500"`;
 * - any other value is written in normalised scientific form, one digit before the point and no
 *   trailing zeros: `"1.50"` → `"1.5e0"`, `"0.001"` → `"1e-3"`, `"1e400"` → `"1e400"`.
 *
 * Exponents of any size are handled exactly.
 *
 * @throws {ProtocolFormatError} `invalid_number_lexeme` when `lexeme` is not a JSON number.
 */
export function normalizeJsonNumber(lexeme: string): string {
  const match = NUMBER_LEXEME.exec(lexeme);
  if (match === null) {
    throw new ProtocolFormatError('invalid_number_lexeme', `Not a JSON number: ${preview(lexeme)}`);
  }
  const negative = match[1] === '-';
  const integerDigits = match[2] ?? '';
  const fractionDigits = match[3] ?? '';
  const exponentText = match[4];

  let digits = integerDigits + fractionDigits;
  const firstNonZero = firstNonZeroIndex(digits);
  if (firstNonZero === -1) return '0';
  let trailingZeros = 0;
  while (digits.charCodeAt(digits.length - 1 - trailingZeros) === 48) trailingZeros += 1;
  digits = digits.slice(firstNonZero, digits.length - trailingZeros);

  // value = digits × 10^exponent
  const exponent =
    (exponentText === undefined ? 0n : BigInt(exponentText)) - BigInt(fractionDigits.length) + BigInt(trailingZeros);
  const sign = negative ? '-' : '';

  if (exponent >= 0n && BigInt(digits.length) + exponent <= BigInt(MAX_PLAIN_INTEGER_DIGITS)) {
    return sign + digits + '0'.repeat(Number(exponent));
  }
  const scientificExponent = exponent + BigInt(digits.length - 1);
  const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${mantissa}e${scientificExponent}`;
}

function firstNonZeroIndex(digits: string): number {
  for (let index = 0; index < digits.length; index += 1) {
    if (digits.charCodeAt(index) !== 48) return index;
  }
  return -1;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
