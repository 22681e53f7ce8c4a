import { describe, expect, it } from 'vitest';
import { parseKey, parseKeyCombos, parseModifiers } from './computerKeys.js';
import { computerActInput, planAction, type ComputerActArgs } from './computerPlan.js';
import type { FramePoint } from './displayFrames.js';

const at = (x: number | undefined, y: number | undefined): FramePoint => ({ screenIndex: 0, fx: x ?? -1, fy: y ?? -1 });
const plan = (args: Record<string, unknown>) => planAction(computerActInput.parse(args) as ComputerActArgs, at);
const named = (name: string, down: boolean) => ({ kind: 'key', key: { kind: 'named', name }, down });

describe('computer.act keys', () => {
  it('reads xdotool, Anthropic and OpenClaw spellings', () => {
    expect(parseKey('Return')).toEqual({ kind: 'named', name: 'enter' });
    expect(parseKey('Page_Up')).toEqual({ kind: 'named', name: 'pageup' });
    expect(parseKey('Super_L')).toEqual({ kind: 'named', name: 'meta' });
    expect(parseKey('cmd')).toEqual({ kind: 'named', name: 'meta' });
    expect(parseKey('Control_R')).toEqual({ kind: 'named', name: 'ctrl' });
    expect(parseKey('F12')).toEqual({ kind: 'named', name: 'f12' });
    expect(parseKey('é')).toEqual({ kind: 'char', char: 'é' });
    expect(parseKeyCombos('ctrl+shift+t')).toEqual([[{ kind: 'named', name: 'ctrl' }, { kind: 'named', name: 'shift' }, { kind: 'char', char: 't' }]]);
    expect(parseKeyCombos('ctrl++')).toEqual([[{ kind: 'named', name: 'ctrl' }, { kind: 'char', char: '+' }]]);
    expect(parseKeyCombos('ctrl+a Delete')).toHaveLength(2);
  });

  it('refuses unknown keys, empty combos and non-modifiers as modifiers with COMPUTER_UNSUPPORTED_KEY', () => {
    expect(() => parseKey('Hyper_Q')).toThrow(/^COMPUTER_UNSUPPORTED_KEY: unknown key "Hyper_Q"/);
    expect(() => parseKeyCombos('ctrl+')).toThrow(/empty key/);
    expect(() => parseKeyCombos('   ')).toThrow(/keys is empty/);
    expect(() => parseKeyCombos('a+b+c+d+e+f+g+h+i')).toThrow(/at most 8/);
    expect(() => parseModifiers('ctrl+x')).toThrow(/unknown modifier "x"/);
    expect(parseModifiers('cmd+shift')).toEqual([{ kind: 'named', name: 'meta' }, { kind: 'named', name: 'shift' }]);
  });
});

describe('computer.act plans', () => {
  it('clicks: move, modifiers held around the presses', () => {
    expect(plan({ action: 'double_click', x: 3, y: 4, modifiers: 'shift' })).toEqual([
      { kind: 'move', point: at(3, 4) },
      named('shift', true),
      { kind: 'button', button: 1, down: true },
      { kind: 'button', button: 1, down: false },
      { kind: 'button', button: 1, down: true },
      { kind: 'button', button: 1, down: false },
      named('shift', false),
    ]);
    expect(plan({ action: 'right_click', x: 1, y: 1 }).filter((step) => step.kind === 'button')).toEqual([{ kind: 'button', button: 3, down: true }, { kind: 'button', button: 3, down: false }]);
  });

  it('drag glides from the start to the end with the button held', () => {
    const steps = plan({ action: 'left_click_drag', fromX: 0, fromY: 0, x: 8, y: 16, durationMs: 80 });
    expect(steps[0]).toEqual({ kind: 'move', point: at(0, 0) });
    expect(steps[1]).toEqual({ kind: 'button', button: 1, down: true });
    expect(steps.at(-2)).toEqual({ kind: 'move', point: at(8, 16) });
    expect(steps.at(-1)).toEqual({ kind: 'button', button: 1, down: false });
    expect(steps.filter((step) => step.kind === 'pause')).toHaveLength(8);
  });

  it('scroll, button down/up without coordinates, type, key, hold_key and wait', () => {
    expect(plan({ action: 'scroll', scrollDirection: 'left', scrollAmount: 2 })).toEqual([
      { kind: 'button', button: 6, down: true },
      { kind: 'button', button: 6, down: false },
      { kind: 'button', button: 6, down: true },
      { kind: 'button', button: 6, down: false },
    ]);
    expect(plan({ action: 'left_mouse_down' })).toEqual([{ kind: 'button', button: 1, down: true }]);
    expect(plan({ action: 'left_mouse_up', x: 2, y: 2 })).toEqual([{ kind: 'move', point: at(2, 2) }, { kind: 'button', button: 1, down: false }]);
    expect(plan({ action: 'type', text: 'hi' })).toEqual([{ kind: 'text', text: 'hi' }]);
    expect(plan({ action: 'key', keys: 'ctrl+c' })).toEqual([named('ctrl', true), { kind: 'key', key: { kind: 'char', char: 'c' }, down: true }, { kind: 'key', key: { kind: 'char', char: 'c' }, down: false }, named('ctrl', false)]);
    expect(plan({ action: 'hold_key', keys: 'shift', durationMs: 250 })).toEqual([named('shift', true), { kind: 'pause', ms: 250 }, named('shift', false)]);
    expect(plan({ action: 'wait' })).toEqual([{ kind: 'pause', ms: 1000 }]);
  });

  it('refuses missing fields and limits with COMPUTER_INVALID_REQUEST, and caps inputs in the schema', () => {
    expect(() => plan({ action: 'scroll' })).toThrow(/^COMPUTER_INVALID_REQUEST: scrollDirection/);
    expect(() => plan({ action: 'type' })).toThrow(/text is required/);
    expect(() => plan({ action: 'key' })).toThrow(/keys is required/);
    expect(() => plan({ action: 'hold_key', keys: 'a', durationMs: 30_001 })).toThrow(/at most 30000 ms/);
    expect(computerActInput.safeParse({ action: 'type', text: 'x'.repeat(10_001) }).success).toBe(false);
    expect(computerActInput.safeParse({ action: 'scroll', scrollDirection: 'up', scrollAmount: 101 }).success).toBe(false);
    expect(computerActInput.safeParse({ action: 'list_apps' }).success).toBe(false);
  });
});
