import { CapabilityError } from '../../errors.js';

/** A key of `computer.act`'s `key`/`hold_key` combos and modifiers: a named key, or one character. */
export type KeySpec = { readonly kind: 'named'; readonly name: NamedKey } | { readonly kind: 'char'; readonly char: string };

/** A named key with its code on each platform: X11 keysym, macOS virtual keycode, Windows virtual-key. */
interface NamedKeyCodes {
  readonly x11: number;
  readonly mac: number;
  readonly win: number;
}

const FUNCTION_KEYS_MAC = [122, 120, 99, 118, 96, 97, 98, 100, 101, 109, 103, 111, 105, 107, 113, 106, 64, 79, 80, 90];

function functionKeys(): Record<string, NamedKeyCodes> {
  const keys: Record<string, NamedKeyCodes> = {};
  for (let n = 1; n <= 20; n++) keys[`f${n}`] = { x11: 0xffbe + n - 1, mac: FUNCTION_KEYS_MAC[n - 1]!, win: 0x70 + n - 1 };
  return keys;
}

/** The named keys, by canonical lower-case name. */
export const NAMED_KEYS = {
  shift: { x11: 0xffe1, mac: 56, win: 0x10 },
  ctrl: { x11: 0xffe3, mac: 59, win: 0x11 },
  alt: { x11: 0xffe9, mac: 58, win: 0x12 },
  meta: { x11: 0xffeb, mac: 55, win: 0x5b },
  enter: { x11: 0xff0d, mac: 36, win: 0x0d },
  tab: { x11: 0xff09, mac: 48, win: 0x09 },
  escape: { x11: 0xff1b, mac: 53, win: 0x1b },
  space: { x11: 0x20, mac: 49, win: 0x20 },
  backspace: { x11: 0xff08, mac: 51, win: 0x08 },
  delete: { x11: 0xffff, mac: 117, win: 0x2e },
  insert: { x11: 0xff63, mac: 114, win: 0x2d },
  home: { x11: 0xff50, mac: 115, win: 0x24 },
  end: { x11: 0xff57, mac: 119, win: 0x23 },
  pageup: { x11: 0xff55, mac: 116, win: 0x21 },
  pagedown: { x11: 0xff56, mac: 121, win: 0x22 },
  left: { x11: 0xff51, mac: 123, win: 0x25 },
  up: { x11: 0xff52, mac: 126, win: 0x26 },
  right: { x11: 0xff53, mac: 124, win: 0x27 },
  down: { x11: 0xff54, mac: 125, win: 0x28 },
  capslock: { x11: 0xffe5, mac: 57, win: 0x14 },
  ...functionKeys(),
} as const satisfies Record<string, NamedKeyCodes>;

export type NamedKey = keyof typeof NAMED_KEYS;

/** Spellings agents use (xdotool keysym names, Anthropic's and OpenClaw's aliases), lower-cased, `_`/`-` removed. */
const ALIASES: Readonly<Record<string, NamedKey>> = {
  control: 'ctrl',
  ctl: 'ctrl',
  option: 'alt',
  opt: 'alt',
  mod1: 'alt',
  cmd: 'meta',
  command: 'meta',
  super: 'meta',
  win: 'meta',
  windows: 'meta',
  mod4: 'meta',
  return: 'enter',
  kpenter: 'enter',
  esc: 'escape',
  del: 'delete',
  ins: 'insert',
  pgup: 'pageup',
  prior: 'pageup',
  pgdn: 'pagedown',
  next: 'pagedown',
  arrowleft: 'left',
  arrowup: 'up',
  arrowright: 'right',
  arrowdown: 'down',
  caps: 'capslock',
};

/** The modifiers, the only keys `modifiers` (on clicks and scrolls) may name. */
export const MODIFIER_KEYS: readonly NamedKey[] = ['shift', 'ctrl', 'alt', 'meta'];

/** Refusal of a key name, with OpenClaw's code. */
export function unknownKeyError(message: string): CapabilityError {
  return new CapabilityError('invalid_arguments', `COMPUTER_UNSUPPORTED_KEY: ${message}`, { data: { code: 'COMPUTER_UNSUPPORTED_KEY' } });
}

/** One key by name (`Return`, `ctrl`, `Page_Up`, `F5`, `Super_L`) or a single character (`a`, `+`, `é`). */
export function parseKey(raw: string): KeySpec {
  const text = raw.trim();
  if (text === '') throw unknownKeyError('a key combo contains an empty key');
  if ([...text].length === 1) return { kind: 'char', char: text };
  const folded = text.toLowerCase().replace(/[_-]/g, '').replace(/(?<=^(shift|control|ctrl|alt|super|meta))(l|r)$/, '');
  const name = folded in NAMED_KEYS ? (folded as NamedKey) : ALIASES[folded];
  if (!name) throw unknownKeyError(`unknown key ${JSON.stringify(text.slice(0, 40))}`);
  return { kind: 'named', name };
}

/** Splits `ctrl+shift+t` into its keys (`+` itself written as a trailing `++` or alone). */
function splitCombo(combo: string): string[] {
  const trimmed = combo.trim();
  if (trimmed === '+') return ['+'];
  if (trimmed.endsWith('++')) return [...trimmed.slice(0, -2).split('+'), '+'];
  return trimmed.split('+');
}

/** Most keys one combo may hold at once. */
const MAX_COMBO_KEYS = 8;

/**
 * A key combo or a space-separated sequence of them (`ctrl+shift+t`, `Return`, `ctrl+a Delete`):
 * each combo's keys are pressed in order and released in reverse.
 */
export function parseKeyCombos(keys: string): KeySpec[][] {
  const combos = keys.trim().split(/\s+/).filter((part) => part !== '');
  if (combos.length === 0) throw unknownKeyError('keys is empty');
  return combos.map((combo) => {
    const parts = splitCombo(combo).map(parseKey);
    if (parts.length > MAX_COMBO_KEYS) throw unknownKeyError(`a combo holds at most ${MAX_COMBO_KEYS} keys`);
    return parts;
  });
}

/** `modifiers` of a click or scroll (`shift`, `ctrl+alt`, `cmd`): modifier keys only. */
export function parseModifiers(modifiers: string | undefined): KeySpec[] {
  if (modifiers === undefined || modifiers.trim() === '') return [];
  return modifiers.split('+').map((part) => {
    const key = parseKey(part);
    if (key.kind !== 'named' || !MODIFIER_KEYS.includes(key.name)) throw unknownKeyError(`unknown modifier ${JSON.stringify(part.trim().slice(0, 40))} (use shift, ctrl, alt or cmd)`);
    return key;
  });
}
