import { describe, expect, it } from 'vitest';
import { createExpiringMap } from './expiringMap.js';

function setup(ttl = 100, capacity = 3) {
  const clock = { time: 0 };
  return { clock, map: createExpiringMap<number>({ ttl, capacity, now: () => clock.time }) };
}

describe('createExpiringMap', () => {
  it('expires entries ttl after their last write and evicts the oldest live entry at capacity', () => {
    const { clock, map } = setup();
    map.set('a', 1);
    clock.time = 10;
    map.set('b', 2);
    map.set('c', 3);
    clock.time = 50;
    map.set('a', 4); // rewritten: now the newest
    map.set('d', 5); // evicts b, the oldest live one
    expect([map.get('a'), map.get('b'), map.get('c'), map.get('d')]).toEqual([4, undefined, 3, 5]);
    clock.time = 115;
    expect(map.get('a')).toBe(4);
    expect(map.get('c')).toBeUndefined();
    expect(map.size).toBe(2);
    clock.time = 300;
    expect(map.size).toBe(0);
  });

  it('keeps a live entry on add and takes it once', () => {
    const { map } = setup();
    expect(map.add('x', 1)).toBe(true);
    expect(map.add('x', 2)).toBe(false);
    expect(map.take('x')).toBe(1);
    expect(map.take('x')).toBeUndefined();
    expect(map.add('x', 3)).toBe(true);
  });

  it('stays bounded when one key is rewritten many times behind an older live entry', () => {
    const { clock, map } = setup(1e9, 4);
    map.set('old', 0);
    for (let i = 0; i < 100_000; i++) {
      clock.time = i;
      map.set('hot', i);
    }
    expect(map.get('old')).toBe(0);
    expect(map.get('hot')).toBe(99_999);
    expect(map.size).toBe(2);
    for (const key of ['a', 'b', 'c']) map.set(key, 1);
    expect(map.get('old')).toBeUndefined(); // the oldest live entry went first
    expect(map.get('hot')).toBe(99_999);
  });

  it('evicts in write order across many keys at capacity', () => {
    const { map } = setup(1e9, 1024);
    for (let i = 0; i < 5000; i++) map.set(`k${i}`, i);
    expect(map.size).toBe(1024);
    expect(map.get('k3975')).toBeUndefined();
    expect(map.get('k3976')).toBe(3976);
    expect(map.get('k4999')).toBe(4999);
  });
});
