import { describe, expect, it } from 'vitest';
import { MAX_ARGUMENTS_DEPTH, exceedsJsonDepth } from './jsonDepth.js';

function nested(depth: number, kind: 'object' | 'array' = 'object'): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = kind === 'object' ? { a: value } : [value];
  return value;
}

describe('exceedsJsonDepth', () => {
  it('counts container levels: a scalar is 0, {} and [] are 1', () => {
    expect(exceedsJsonDepth(1, 0)).toBe(false);
    expect(exceedsJsonDepth(null, 0)).toBe(false);
    expect(exceedsJsonDepth({}, 0)).toBe(true);
    expect(exceedsJsonDepth({}, 1)).toBe(false);
    expect(exceedsJsonDepth({ a: [1] }, 2)).toBe(false);
    expect(exceedsJsonDepth({ a: [[1]] }, 2)).toBe(true);
    expect(exceedsJsonDepth([{ b: {} }, 1, 'x'], 3)).toBe(false);
    expect(exceedsJsonDepth([{ b: {} }, 1, 'x'], 2)).toBe(true);
  });

  it('accepts exactly MAX_ARGUMENTS_DEPTH levels and refuses one more', () => {
    expect(exceedsJsonDepth(nested(MAX_ARGUMENTS_DEPTH), MAX_ARGUMENTS_DEPTH)).toBe(false);
    expect(exceedsJsonDepth(nested(MAX_ARGUMENTS_DEPTH + 1), MAX_ARGUMENTS_DEPTH)).toBe(true);
    expect(exceedsJsonDepth(nested(MAX_ARGUMENTS_DEPTH + 1, 'array'), MAX_ARGUMENTS_DEPTH)).toBe(true);
  });

  it('answers a 1,000,000-deep value without a stack overflow', () => {
    const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as unknown;
    expect(exceedsJsonDepth(deep, MAX_ARGUMENTS_DEPTH)).toBe(true);
    expect(exceedsJsonDepth(nested(100_000), MAX_ARGUMENTS_DEPTH)).toBe(true);
  });

  it('sees depth under a parsed "__proto__" key (an own property, not the prototype)', () => {
    const deep = JSON.parse(`{"__proto__":${'['.repeat(100)}${']'.repeat(100)}}`) as unknown;
    expect(exceedsJsonDepth(deep, MAX_ARGUMENTS_DEPTH)).toBe(true);
  });

  it('treats a cycle as too deep instead of looping', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(exceedsJsonDepth(cyclic, MAX_ARGUMENTS_DEPTH)).toBe(true);
  });

  it('checks wide values to their deepest branch', () => {
    const wide = { items: Array.from({ length: 1000 }, (_, i) => (i === 999 ? nested(70) : { x: i })) };
    expect(exceedsJsonDepth(wide, MAX_ARGUMENTS_DEPTH)).toBe(true);
    expect(exceedsJsonDepth({ items: Array.from({ length: 1000 }, (_, i) => ({ x: i })) }, MAX_ARGUMENTS_DEPTH)).toBe(false);
  });
});
