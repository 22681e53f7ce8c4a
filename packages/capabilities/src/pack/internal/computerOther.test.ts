import { describe, expect, it } from 'vitest';
import { helperSteps, inputHelperCommand, MAC_INPUT_SCRIPT, WINDOWS_INPUT_SCRIPT } from './computerOther.js';
import type { InputStep } from './computerSteps.js';

const steps: InputStep[] = [
  { kind: 'move', point: { screenIndex: 1, fx: 0.25, fy: 0.5 } },
  { kind: 'key', key: { kind: 'named', name: 'meta' }, down: true },
  { kind: 'key', key: { kind: 'char', char: 'c' }, down: true },
  { kind: 'key', key: { kind: 'char', char: 'c' }, down: false },
  { kind: 'key', key: { kind: 'char', char: '€' }, down: true },
  { kind: 'key', key: { kind: 'named', name: 'meta' }, down: false },
  { kind: 'button', button: 3, down: true },
  { kind: 'text', text: 'hé' },
  { kind: 'pause', ms: 40 },
];

describe('macOS and Windows input helpers', () => {
  it('macOS: osascript JavaScript with the steps in CAPNODE_INPUT_STEPS, keys as US-layout virtual keycodes', () => {
    const command = inputHelperCommand(steps, 'darwin');
    expect(command.program).toBe('osascript');
    expect(command.args).toEqual(['-l', 'JavaScript', '-e', MAC_INPUT_SCRIPT]);
    expect(JSON.parse(command.env.CAPNODE_INPUT_STEPS!)).toEqual([
      { k: 'm', s: 1, fx: 0.25, fy: 0.5 },
      { k: 'key', c: 55, d: true },
      { k: 'key', c: 8, d: true },
      { k: 'key', c: 8, d: false },
      { k: 'ch', t: '€', d: true },
      { k: 'key', c: 55, d: false },
      { k: 'b', b: 3, d: true },
      { k: 't', t: 'hé' },
      { k: 'p', ms: 40 },
    ]);
    expect(MAC_INPUT_SCRIPT).toContain('CGEventPost($.kCGHIDEventTap');
    expect(MAC_INPUT_SCRIPT).toContain("objectForKey('CAPNODE_INPUT_STEPS')");
  });

  it('Windows: PowerShell -EncodedCommand of the SendInput script, keys as virtual-key codes, characters through VkKeyScan', () => {
    const command = inputHelperCommand(steps, 'win32');
    expect(command.program).toBe('powershell');
    expect(command.args.slice(0, 5)).toEqual(['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand']);
    expect(Buffer.from(command.args[5]!, 'base64').toString('utf16le')).toBe(WINDOWS_INPUT_SCRIPT);
    expect(helperSteps(steps, 'win32').slice(1, 5)).toEqual([
      { k: 'key', c: 0x5b, d: true },
      { k: 'ch', t: 'c', d: true },
      { k: 'ch', t: 'c', d: false },
      { k: 'ch', t: '€', d: true },
    ]);
    expect(WINDOWS_INPUT_SCRIPT).toContain('SendInput');
    expect(WINDOWS_INPUT_SCRIPT).toContain('$env:CAPNODE_INPUT_STEPS');
  });
});
