import { describe, expect, it } from 'vitest';
import { changeKeyboardMappingRequest, fakeInputRequest, keysymOfChar, locateKeysym, spareKeycode, X_MOTION_NOTIFY } from './x11Input.js';

describe('XTEST requests and keyboard mapping', () => {
  it('encodes FakeInput as 36 bytes: type, detail, root, position', () => {
    const bytes = fakeInputRequest(140, { type: X_MOTION_NOTIFY, detail: 0, root: 0x50d, x: 501, y: -2 });
    expect(bytes.length).toBe(36);
    expect([bytes.readUInt8(0), bytes.readUInt8(1), bytes.readUInt16LE(2), bytes.readUInt8(4)]).toEqual([140, 2, 9, 6]);
    expect([bytes.readUInt32LE(12), bytes.readInt16LE(24), bytes.readInt16LE(26)]).toEqual([0x50d, 501, -2]);
  });

  it('encodes ChangeKeyboardMapping of one keycode', () => {
    const bytes = changeKeyboardMappingRequest(255, [0x20ac, 0x20ac]);
    expect([bytes.readUInt8(0), bytes.readUInt8(1), bytes.readUInt16LE(2), bytes.readUInt8(4), bytes.readUInt8(5), bytes.readUInt32LE(12)]).toEqual([100, 1, 4, 255, 2, 0x20ac]);
  });

  it('finds keysyms unshifted first, then shifted, and a spare keycode', () => {
    const mapping = { first: 8, perKeycode: 2, keysyms: Uint32Array.from([0x61, 0x41, 0x31, 0x21, 0, 0]) };
    expect(locateKeysym(mapping, 0x61)).toEqual({ keycode: 8, shift: false });
    expect(locateKeysym(mapping, 0x21)).toEqual({ keycode: 9, shift: true });
    expect(locateKeysym(mapping, 0xe9)).toBeUndefined();
    expect(spareKeycode(mapping)).toBe(10);
  });

  it('maps characters to keysyms: Latin-1 as is, control keys, Unicode above', () => {
    expect(keysymOfChar('a')).toBe(0x61);
    expect(keysymOfChar('é')).toBe(0xe9);
    expect(keysymOfChar('\n')).toBe(0xff0d);
    expect(keysymOfChar('\t')).toBe(0xff09);
    expect(keysymOfChar('€')).toBe(0x010020ac);
    expect(keysymOfChar('😀')).toBe(0x0101f600);
  });
});
