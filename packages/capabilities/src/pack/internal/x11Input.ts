import { CapabilityError } from '../../errors.js';
import type { X11Client } from './x11.js';

/** XTEST event types (core event codes). */
export const X_KEY_PRESS = 2;
export const X_KEY_RELEASE = 3;
export const X_BUTTON_PRESS = 4;
export const X_BUTTON_RELEASE = 5;
export const X_MOTION_NOTIFY = 6;

/** XTestGetVersion (minor 0) asking for 2.2. */
export function xtestVersionRequest(major: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeUInt8(major, 0);
  bytes.writeUInt8(0, 1);
  bytes.writeUInt16LE(2, 2);
  bytes.writeUInt8(2, 4);
  bytes.writeUInt16LE(2, 6);
  return bytes;
}

/**
 * XTestFakeInput (minor 2) for the core devices: a key or button press/release (`detail` the keycode
 * or button), or an absolute pointer motion to `x`,`y` of `root`. Time 0 means "now".
 */
export function fakeInputRequest(major: number, event: { type: number; detail: number; root?: number; x?: number; y?: number }): Buffer {
  const bytes = Buffer.alloc(36);
  bytes.writeUInt8(major, 0);
  bytes.writeUInt8(2, 1);
  bytes.writeUInt16LE(9, 2);
  bytes.writeUInt8(event.type, 4);
  bytes.writeUInt8(event.detail, 5);
  bytes.writeUInt32LE(event.root ?? 0, 12);
  bytes.writeInt16LE(event.x ?? 0, 24);
  bytes.writeInt16LE(event.y ?? 0, 26);
  return bytes;
}

/** GetKeyboardMapping (opcode 101) of `count` keycodes from `first`. */
export function getKeyboardMappingRequest(first: number, count: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeUInt8(101, 0);
  bytes.writeUInt16LE(2, 2);
  bytes.writeUInt8(first, 4);
  bytes.writeUInt8(count, 5);
  return bytes;
}

/** ChangeKeyboardMapping (opcode 100) of one keycode to `keysyms` (one per column). */
export function changeKeyboardMappingRequest(keycode: number, keysyms: readonly number[]): Buffer {
  const bytes = Buffer.alloc(8 + keysyms.length * 4);
  bytes.writeUInt8(100, 0);
  bytes.writeUInt8(1, 1);
  bytes.writeUInt16LE(bytes.length / 4, 2);
  bytes.writeUInt8(keycode, 4);
  bytes.writeUInt8(keysyms.length, 5);
  keysyms.forEach((keysym, i) => bytes.writeUInt32LE(keysym, 8 + i * 4));
  return bytes;
}

/** The keyboard mapping: keysyms per keycode, keycode `first + i` at row `i`. */
export interface KeyboardMapping {
  readonly first: number;
  readonly perKeycode: number;
  readonly keysyms: Uint32Array;
}

export function keyboardMappingFromReply(reply: Buffer, first: number): KeyboardMapping {
  const perKeycode = reply.readUInt8(1);
  const count = reply.readUInt32LE(4);
  const keysyms = new Uint32Array(count);
  for (let i = 0; i < count; i++) keysyms[i] = reply.readUInt32LE(32 + i * 4);
  return { first, perKeycode, keysyms };
}

/** Where a keysym sits: its keycode and whether Shift selects it (the second column). */
export interface KeyLocation {
  readonly keycode: number;
  readonly shift: boolean;
}

/** Finds a keysym in the first two columns (unshifted first); `undefined` when no key makes it. */
export function locateKeysym(mapping: KeyboardMapping, keysym: number): KeyLocation | undefined {
  const rows = mapping.perKeycode === 0 ? 0 : mapping.keysyms.length / mapping.perKeycode;
  const columns = Math.min(2, mapping.perKeycode);
  for (let column = 0; column < columns; column++) {
    for (let row = 0; row < rows; row++) {
      if (mapping.keysyms[row * mapping.perKeycode + column] === keysym) return { keycode: mapping.first + row, shift: column === 1 };
    }
  }
  return undefined;
}

/** A keycode no keysym is bound to (used to type a character the layout has no key for). */
export function spareKeycode(mapping: KeyboardMapping): number | undefined {
  const rows = mapping.perKeycode === 0 ? 0 : mapping.keysyms.length / mapping.perKeycode;
  for (let row = rows - 1; row >= 0; row--) {
    let empty = true;
    for (let column = 0; column < mapping.perKeycode && empty; column++) empty = mapping.keysyms[row * mapping.perKeycode + column] === 0;
    if (empty) return mapping.first + row;
  }
  return undefined;
}

/** The keysym of a character: Latin-1 as itself, newline Return, tab Tab, anything else Unicode (0x01000000 + code point). */
export function keysymOfChar(char: string): number {
  const code = char.codePointAt(0)!;
  if (char === '\n' || char === '\r') return 0xff0d;
  if (char === '\t') return 0xff09;
  if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff)) return code;
  return 0x01000000 + code;
}

const SHIFT_L = 0xffe1;

/**
 * Synthetic input on an X display through XTEST over one connection: pointer motion, buttons and
 * keys by keysym. A keysym no key produces is typed by binding it to a spare keycode (one with no
 * keysym), as xdotool does; the binding stays, so the keycode is never retargeted under a press an
 * application has not handled yet.
 */
export interface X11Input {
  readonly root: number;
  move(x: number, y: number): void;
  button(button: number, down: boolean): void;
  /** Presses or releases the key of `keysym` (with Shift when the layout needs it). */
  key(keysym: number, down: boolean): Promise<void>;
  /** Waits until the server has handled every event sent so far. */
  sync(): Promise<void>;
}

/** Opens XTEST input on `client` (fails `unavailable` when the server has no XTEST). */
export async function openX11Input(client: X11Client): Promise<X11Input> {
  const major = await client.extension('XTEST');
  if (major === undefined) throw new CapabilityError('unavailable', 'unavailable here: the X server has no XTEST extension, which computer control needs (Xorg and Xvfb have it).');
  const root = client.screen.root;
  const { minKeycode, maxKeycode } = client.setup;
  // Fetched on the first key of the action: pointer-only actions never need it.
  let mapping: KeyboardMapping | undefined;
  const keyboard = async (): Promise<KeyboardMapping> => {
    mapping ??= keyboardMappingFromReply(await client.request(getKeyboardMappingRequest(minKeycode, maxKeycode - minKeycode + 1), 'GetKeyboardMapping'), minKeycode);
    return mapping;
  };
  const send = (type: number, detail: number) => client.send(fakeInputRequest(major, { type, detail, root }));
  // Each character the layout lacks gets a spare keycode of its own and keeps it: the next action
  // finds it in the mapping. Rebinding a keycode would change what an application still processing
  // an earlier press of it reads (it looks keysyms up when it handles the event, not when it was sent).
  const bind = async (keysym: number): Promise<KeyLocation> => {
    const layout = await keyboard();
    const keycode = spareKeycode(layout) ?? maxKeycode;
    const row = (keycode - layout.first) * layout.perKeycode;
    for (let column = 0; column < layout.perKeycode; column++) layout.keysyms[row + column] = keysym;
    client.send(changeKeyboardMappingRequest(keycode, Array.from({ length: layout.perKeycode }, () => keysym)));
    await client.sync();
    return { keycode, shift: false };
  };

  return {
    root,
    move: (x, y) => client.send(fakeInputRequest(major, { type: X_MOTION_NOTIFY, detail: 0, root, x, y })),
    button: (button, down) => send(down ? X_BUTTON_PRESS : X_BUTTON_RELEASE, button),
    async key(keysym, down) {
      const layout = await keyboard();
      const location = locateKeysym(layout, keysym) ?? (await bind(keysym));
      const shift = location.shift ? locateKeysym(layout, SHIFT_L) : undefined;
      if (down) {
        if (shift) send(X_KEY_PRESS, shift.keycode);
        send(X_KEY_PRESS, location.keycode);
      } else {
        send(X_KEY_RELEASE, location.keycode);
        if (shift) send(X_KEY_RELEASE, shift.keycode);
      }
    },
    sync: () => client.sync(),
  };
}
