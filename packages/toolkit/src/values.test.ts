import { describe, expect, it } from 'vitest';
import { isPlainObject } from './values.js';

describe('isPlainObject', () => {
  it('is true for a non-null, non-array object (what a JSON object parses to)', () => {
    for (const value of [{}, { a: 1 }, Object.create(null), JSON.parse('{"x":[1]}')]) expect(isPlainObject(value)).toBe(true);
  });
  it('is false for null, arrays and primitives', () => {
    for (const value of [null, undefined, [], [1], 'x', 1, true, () => {}]) expect(isPlainObject(value)).toBe(false);
  });
});
