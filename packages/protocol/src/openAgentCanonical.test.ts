import { describe, expect, it } from 'vitest';
import { isProtocolFormatError } from './errors.js';
import { openAgentArgumentsSha256 } from './node.js';
import { openAgentCanonicalJson } from './openAgentCanonical.js';

/** The spec's vectors (openagent-client-capabilities.md, "Argument hash test vectors"). */
const VECTORS: readonly (readonly [args: unknown, text: string | undefined, sha256: string])[] = [
  [{ command: ['echo', 'hi'] }, '{"command":["echo","hi"]}', '1ed1fd6d1ab6fa1ec5e0717ad6ab7a7ea66d78b42b8842c1a5a5f6924b9b7a2c'],
  [{ x: 1e-7 }, '{"x":1e-07}', 'c8b4301d31692cc55fc58ee2d4368e95e4971ac5d25036abceb45c33a05b0fcb'],
  [{ x: 1e21 }, '{"x":1000000000000000000000}', '8678688cc72647907673933d34b2675da9a995c3ee7c345210a0a2da55a8c4cb'],
  [{ x: 0.000001 }, '{"x":1e-06}', '89a1d9e7ce676db7f66963901ee511773bb673fa95558bceb73c91bdcc28327b'],
  [JSON.parse('{"x":1.0,"y":-0.0}'), '{"x":1,"y":0}', 'a80c49b28bf855a80d7489877a52a7eb13df682ed8028fd5b38cebe6759e7c0e'],
  [{ b: 1, a: [{ z: 'é', y: null }] }, '{"a":[{"y":null,"z":"é"}],"b":1}', '28429bf9aca1998c95ccdf20b14b759e14ac1fe0a7808352790c46b9407153b2'],
  [{ '\u{10000}': 2, '\uffff': 1 }, '{"\uffff":1,"\u{10000}":2}', '5d0565db2590e7475bdf0f43c32a52eafabf71219c8a4aa8bf2099d799cefd0c'],
  [{ n: 123456789.125 }, '{"n":123456789.125}', 'bb91947befd169827b9308b6b63fc050867d5c9b860925e87c57aa9764ff0d5c'],
];

describe('openAgentCanonicalJson', () => {
  it.each(VECTORS.map(([args, text, sha], index) => ({ index, args, text, sha })))('matches the spec vector $index', ({ args, text, sha }) => {
    if (text !== undefined) expect(openAgentCanonicalJson(args)).toBe(text);
    expect(openAgentArgumentsSha256(args)).toBe(sha);
  });

  it('prints numbers as Python repr does', () => {
    expect(openAgentCanonicalJson([0.0001, 0.00012, 1.5e-5, -2.5e-10, 5e-324, 0.1, 1e16, 2 ** 60, -3])).toBe(
      '[0.0001,0.00012,1.5e-05,-2.5e-10,5e-324,0.1,10000000000000000,1152921504606846976,-3]',
    );
  });

  it('escapes only quotes, backslashes and control characters', () => {
    expect(openAgentCanonicalJson('a"\\\n\u0001\u007f/é😀')).toBe('"a\\"\\\\\\n\\u0001\u007f/é😀"');
  });

  it('refuses what Python refuses', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, '\ud800', { a: () => 1 }, new Map()]) {
      let error: unknown;
      try {
        openAgentCanonicalJson(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isProtocolFormatError(error)).toBe(true);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => openAgentCanonicalJson(cyclic)).toThrow(/cyclic/);
  });

  it('allows the same object twice when it is not a cycle and handles deep nesting', () => {
    const shared = { a: 1 };
    expect(openAgentCanonicalJson([shared, shared])).toBe('[{"a":1},{"a":1}]');
    let deep: unknown = 0;
    for (let index = 0; index < 20_000; index += 1) deep = [deep];
    expect(openAgentCanonicalJson(deep)).toHaveLength(40_001);
  });
});
