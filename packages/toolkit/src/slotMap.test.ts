import { describe, expect, it } from 'vitest';
import { SlotMap } from './slotMap.js';

describe('SlotMap', () => {
  it('behaves like a Map for get, set, has, delete, size and clear', () => {
    const map = new SlotMap<string | number, string>([
      ['a', 'A'],
      [1, 'one'],
    ]);
    expect(map.size).toBe(2);
    expect(map.get('a')).toBe('A');
    expect(map.get('1')).toBeUndefined();
    expect(map.set(1, 'uno')).toBe(map);
    expect(map.get(1)).toBe('uno');
    expect(map.size).toBe(2);
    expect(map.has('a')).toBe(true);
    expect(map.delete('a')).toBe(true);
    expect(map.delete('a')).toBe(false);
    expect(map.has('a')).toBe(false);
    expect(map.size).toBe(1);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get(1)).toBeUndefined();
    expect(String(map)).toBe('[object SlotMap]');
  });

  it('compares keys with SameValueZero', () => {
    const map = new SlotMap<unknown, number>();
    map.set(Number.NaN, 1);
    map.set(-0, 2);
    const key = {};
    map.set(key, 3);
    expect(map.get(Number.NaN)).toBe(1);
    expect(map.get(0)).toBe(2);
    expect(map.get({})).toBeUndefined();
    expect(map.get(key)).toBe(3);
  });

  it('keeps every live entry through deletions in any order', () => {
    const map = new SlotMap<number, number>();
    const reference = new Map<number, number>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let step = 0; step < 5000; step += 1) {
      const key = Math.floor(random() * 64);
      if (random() < 0.55) {
        map.set(key, step);
        reference.set(key, step);
      } else {
        expect(map.delete(key)).toBe(reference.delete(key));
      }
      expect(map.size).toBe(reference.size);
    }
    expect(new Map(map)).toEqual(reference);
    expect(new Set(map.keys())).toEqual(new Set(reference.keys()));
  });

  it('iterates a snapshot, so entries can be deleted while iterating', () => {
    const map = new SlotMap<number, string>([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    const seen: number[] = [];
    for (const [key] of map) {
      seen.push(key);
      map.delete(key);
    }
    expect(seen.sort()).toEqual([1, 2, 3]);
    expect(map.size).toBe(0);
    const visited: Array<[string, number]> = [];
    new SlotMap([[5, 'x']]).forEach((value, key) => visited.push([value, key]));
    expect(visited).toEqual([['x', 5]]);
    expect([...new SlotMap([[5, 'x']]).values()]).toEqual(['x']);
  });

  it('lets go of a deleted value at once', () => {
    const map = new SlotMap<number, object>();
    map.set(1, { big: true });
    map.set(2, { big: false });
    map.delete(1);
    map.delete(2);
    // Nothing but the size is left to reach: the slots were cleared.
    expect([...map.entries()]).toEqual([]);
  });
});
