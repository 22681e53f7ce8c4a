import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson } from './canonicalJson.js';
import { isProtocolFormatError, type ProtocolFormatErrorCode } from './errors.js';
import { argumentsHashSync } from './node.js';

function failure(value: unknown): { code: ProtocolFormatErrorCode; message: string } {
  try {
    canonicalJson(value);
  } catch (error) {
    if (isProtocolFormatError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('did not throw');
}

describe('canonicalJson', () => {
  it('sorts members recursively and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 0, y: 1 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":1,"z":0}]},"b":1}');
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
    expect(canonicalJson({ 10: 'a', 9: 'b', '-1': 'c', A: 'd', a: 'e', _: 'f' })).toBe('{"-1":"c","10":"a","9":"b","A":"d","_":"f","a":"e"}');
  });

  it('sorts member names by UTF-16 code units (RFC 8785 §3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
        '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('serialises numbers, strings and literals as RFC 8785 §3.2.2 shows', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('writes numbers in ECMAScript form', () => {
    expect(canonicalJson([-0, 0, 1.0, 1e21, 1e20, 1e-7, 1e-6, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, -1.5])).toBe(
      '[0,0,1,1e+21,100000000000000000000,1e-7,0.000001,0.30000000000000004,5e-324,1.7976931348623157e+308,-1.5]',
    );
  });

  it('escapes strings minimally and keeps other characters as they are', () => {
    expect(canonicalJson('\u0000\u0008\t\n\u000b\f\r\u001f "\\/\u007f\u2028é😀')).toBe(
      '"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f \\"\\\\/\u007f\u2028é😀"',
    );
    expect(canonicalJson('\ud800')).toBe('"\\ud800"');
    expect(canonicalJson({ '\n': 1 })).toBe('{"\\n":1}');
  });

  it('accepts plain and null-prototype objects, honours toJSON, and leaves undefined members out', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.b = true;
    bare.a = null;
    expect(canonicalJson(bare)).toBe('{"a":null,"b":true}');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson({ z: { toJSON: (key: string) => ({ key, b: 2, a: 1 }) } })).toBe('{"z":{"a":1,"b":2,"key":"z"}}');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson([[], {}, [[]]])).toBe('[[],{},[[]]]');
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });

  it('agrees with JSON.stringify on already-canonical data', () => {
    const value = { a: [1, 'two', null, true, { b: -0.5, c: 'é\n' }], d: 1e300 };
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
    expect(canonicalJson(JSON.parse(canonicalJson(value)))).toBe(canonicalJson(value));
  });

  it('handles nesting deeper than the call stack', () => {
    const depth = 200_000;
    const text = '['.repeat(depth) + ']'.repeat(depth);
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });

  it('rejects values without a JSON form, naming where they are', () => {
    expect(failure(Number.NaN)).toEqual({ code: 'unserializable_value', message: 'Cannot canonicalize the non-finite number NaN at $' });
    expect(failure({ a: [1, Number.POSITIVE_INFINITY] }).message).toBe('Cannot canonicalize the non-finite number Infinity at $.a[1]');
    expect(failure(undefined).message).toBe('Cannot canonicalize undefined at $');
    expect(failure([1, undefined]).message).toBe('Cannot canonicalize undefined at $[1]');
    expect(failure([1, , 3]).message).toBe('Cannot canonicalize undefined at $[1]');
    expect(failure({ 'a b': { f: () => 1 } }).message).toBe('Cannot canonicalize a function at $["a b"].f');
    expect(failure({ s: Symbol('x') }).message).toBe('Cannot canonicalize a symbol at $.s');
    expect(failure({ n: 10n }).message).toBe('Cannot canonicalize a bigint at $.n');
    expect(failure({ m: new Map() }).message).toBe('Cannot canonicalize a Map at $.m');
    expect(failure([new (class Point {})()]).message).toBe('Cannot canonicalize a Point at $[0]');
    expect(failure({ w: new String('x') }).code).toBe('unserializable_value');
  });

  it('rejects cycles', () => {
    const node: Record<string, unknown> = { name: 'root' };
    node.self = node;
    expect(failure(node)).toEqual({ code: 'cyclic_value', message: 'Cannot canonicalize a cyclic reference at $.self' });
    const list: unknown[] = [1];
    list.push({ back: list });
    expect(failure(list)).toEqual({ code: 'cyclic_value', message: 'Cannot canonicalize a cyclic reference at $[1].back' });
  });
});

describe('argumentsHash', () => {
  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

  it('is the hex SHA-256 of the UTF-8 canonical JSON', async () => {
    expect(await argumentsHash({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    const value = { path: '/tmp/é😀', flags: ['-l', '-a'], depth: 2.5 };
    expect(await argumentsHash(value)).toBe(sha256(canonicalJson(value)));
  });

  it('is stable across member order, number spelling and string escaping', async () => {
    const a = JSON.parse('{"b":[1.0,2e0],"a":"\\u0061","c":{"y":1,"x":0.50}}') as unknown;
    const b = JSON.parse('{"c":{"x":0.5,"y":10E-1},"a":"a","b":[1,2]}') as unknown;
    expect(await argumentsHash(a)).toBe(await argumentsHash(b));
    expect(await argumentsHash({ a: 1 })).not.toBe(await argumentsHash({ a: '1' }));
    expect(await argumentsHash([1, 2])).not.toBe(await argumentsHash([2, 1]));
  });

  it('matches the sync Node twin', async () => {
    for (const value of [null, 0, 'x', [], { a: [{ b: 'é' }], z: -0.25 }, { '\ud800': '\udfff' }]) {
      expect(argumentsHashSync(value)).toBe(await argumentsHash(value));
    }
  });

  it('rejects unserializable values and an aborted signal', async () => {
    await expect(argumentsHash({ f: () => 1 })).rejects.toThrow(/Cannot canonicalize a function at \$\.f/);
    expect(() => argumentsHashSync(undefined)).toThrow(/Cannot canonicalize undefined/);
    await expect(argumentsHash({}, { signal: AbortSignal.abort(new Error('stop')) })).rejects.toThrow('stop');
  });
});
