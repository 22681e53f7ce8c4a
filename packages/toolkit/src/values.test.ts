import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth, isPlainObject } from './values.js';

describe('isPlainObject', () => {
  it('is true for a non-null, non-array object (what a JSON object parses to)', () => {
    for (const value of [{}, { a: 1 }, Object.create(null), JSON.parse('{"x":[1]}')]) expect(isPlainObject(value)).toBe(true);
  });
  it('is false for null, arrays and primitives', () => {
    for (const value of [null, undefined, [], [1], 'x', 1, true, () => {}]) expect(isPlainObject(value)).toBe(false);
  });
});

describe('exceedsJsonDepth', () => {
  it('counts nesting outside strings only', () => {
    expect(exceedsJsonDepth('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(exceedsJsonDepth('{"a":[1,{"b":2}]}', 2)).toBe(true);
    expect(exceedsJsonDepth('{"a":"[[[[[[\\"[[["}', 1)).toBe(false);
    expect(exceedsJsonDepth('['.repeat(100_000) + ']'.repeat(100_000), 64)).toBe(true);
  });
});
