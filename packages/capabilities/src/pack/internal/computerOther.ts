import { CapabilityError } from '../../errors.js';
import { findExecutable } from '../../internal/which.js';
import { NAMED_KEYS, type KeySpec } from './computerKeys.js';
import type { InputBackend, InputContext, InputStep } from './computerSteps.js';
import { runMedia } from './ffmpeg.js';
import { powershellArgs } from './screenArgs.js';

/** One step as the helper scripts read it (JSON in `CAPNODE_INPUT_STEPS`): codes already resolved. */
export type HelperStep =
  | { readonly k: 'm'; readonly s: number; readonly fx: number; readonly fy: number }
  | { readonly k: 'b'; readonly b: number; readonly d: boolean }
  | { readonly k: 'key'; readonly c: number; readonly d: boolean }
  | { readonly k: 'ch'; readonly t: string; readonly d: boolean }
  | { readonly k: 't'; readonly t: string }
  | { readonly k: 'p'; readonly ms: number };

/** US-layout virtual keycodes of the characters macOS key combos name most (`cmd+c`, `cmd+1`, `cmd+/`). */
const MAC_CHAR_KEYCODES: Readonly<Record<string, number>> = Object.fromEntries(
  [...'asdfhgzxcv'].map((c, i) => [c, i] as const).concat(
    [
      ['b', 11], ['q', 12], ['w', 13], ['e', 14], ['r', 15], ['y', 16], ['t', 17], ['1', 18], ['2', 19], ['3', 20], ['4', 21], ['6', 22], ['5', 23], ['=', 24], ['9', 25], ['7', 26], ['-', 27], ['8', 28], ['0', 29],
      [']', 30], ['o', 31], ['u', 32], ['[', 33], ['i', 34], ['p', 35], ['l', 37], ['j', 38], ["'", 39], ['k', 40], [';', 41], ['\\', 42], [',', 43], ['/', 44], ['n', 45], ['m', 46], ['.', 47], ['`', 50],
    ] as const,
  ),
);

function macKey(key: KeySpec, down: boolean): HelperStep {
  if (key.kind === 'named') return { k: 'key', c: NAMED_KEYS[key.name].mac, d: down };
  const code = MAC_CHAR_KEYCODES[key.char.toLowerCase()];
  return code === undefined ? { k: 'ch', t: key.char, d: down } : { k: 'key', c: code, d: down };
}

function winKey(key: KeySpec, down: boolean): HelperStep {
  return key.kind === 'named' ? { k: 'key', c: NAMED_KEYS[key.name].win, d: down } : { k: 'ch', t: key.char, d: down };
}

/** The steps for one platform's helper: keys resolved to its codes. */
export function helperSteps(steps: readonly InputStep[], platform: 'darwin' | 'win32'): HelperStep[] {
  return steps.map((step): HelperStep => {
    switch (step.kind) {
      case 'move':
        return { k: 'm', s: step.point.screenIndex, fx: step.point.fx, fy: step.point.fy };
      case 'button':
        return { k: 'b', b: step.button, d: step.down };
      case 'key':
        return platform === 'darwin' ? macKey(step.key, step.down) : winKey(step.key, step.down);
      case 'text':
        return { k: 't', t: step.text };
      case 'pause':
        return { k: 'p', ms: step.ms };
    }
  });
}

/**
 * macOS helper (JavaScript for Automation): pointer and keys as CoreGraphics events posted to the
 * HID tap (Accessibility permission needed), text one character at a time through System Events,
 * so killing the helper stops typing before the next character.
 */
export const MAC_INPUT_SCRIPT = String.raw`['CoreGraphics', 'AppKit', 'Foundation'].forEach(function (framework) { ObjC.import(framework); });
function run() {
  var env = $.NSProcessInfo.processInfo.environment;
  var steps = JSON.parse(ObjC.unwrap(env.objectForKey('CAPNODE_INPUT_STEPS')));
  var screens = $.NSScreen.screens, mainHeight = screens.objectAtIndex(0).frame.size.height;
  var events = Application('System Events');
  var MASKS = { 56: 0x20000, 59: 0x40000, 58: 0x80000, 55: 0x100000 };
  var flags = 0, held = {}, pos = $.CGEventGetLocation($.CGEventCreate(null)), last = null, clicks = 0;
  function post(e) { $.CGEventSetFlags(e, flags); $.CGEventPost($.kCGHIDEventTap, e); }
  function mouse(b, d) {
    var types = { 1: [$.kCGEventLeftMouseDown, $.kCGEventLeftMouseUp], 3: [$.kCGEventRightMouseDown, $.kCGEventRightMouseUp], 2: [$.kCGEventOtherMouseDown, $.kCGEventOtherMouseUp] };
    if (d) { clicks = last && last.x === pos.x && last.y === pos.y && last.b === b ? clicks + 1 : 1; last = { x: pos.x, y: pos.y, b: b }; }
    var e = $.CGEventCreateMouseEvent(null, types[b][d ? 0 : 1], pos, b === 1 ? 0 : b === 3 ? 1 : 2);
    $.CGEventSetIntegerValueField(e, $.kCGMouseEventClickState, clicks);
    held[b] = d; post(e);
  }
  function wheel(b) { var dy = b === 4 ? 1 : b === 5 ? -1 : 0, dx = b === 6 ? 1 : b === 7 ? -1 : 0; post($.CGEventCreateScrollWheelEvent2(null, $.kCGScrollEventUnitLine, 2, dy, dx, 0)); }
  for (var i = 0; i < steps.length; i++) {
    var s = steps[i];
    if (s.k === 'm') {
      if (s.s >= screens.count) throw new Error('screenIndex ' + s.s + ' does not exist');
      var f = screens.objectAtIndex(s.s).frame;
      pos = { x: f.origin.x + s.fx * f.size.width, y: mainHeight - f.origin.y - f.size.height + s.fy * f.size.height };
      post($.CGEventCreateMouseEvent(null, held[1] ? $.kCGEventLeftMouseDragged : $.kCGEventMouseMoved, pos, 0));
    } else if (s.k === 'b') { if (s.b >= 4) { if (s.d) wheel(s.b); } else mouse(s.b, s.d); }
    else if (s.k === 'key') { if (MASKS[s.c]) flags = s.d ? flags | MASKS[s.c] : flags & ~MASKS[s.c]; post($.CGEventCreateKeyboardEvent(null, s.c, s.d)); }
    else if (s.k === 'ch') { if (s.d) events.keystroke(s.t); }
    else if (s.k === 't') { for (var c of s.t) events.keystroke(c); }
    else if (s.k === 'p') { delay(s.ms / 1000); }
  }
}`;

/**
 * Windows helper (PowerShell + user32 SendInput): pointer placed with SetCursorPos on the screen's
 * bounds, buttons, wheel and keys as SendInput events, text as KEYEVENTF_UNICODE one character at
 * a time (killing the helper stops it before the next character).
 */
export const WINDOWS_INPUT_SCRIPT = String.raw`$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Windows.Forms
Add-Type -TypeDefinition @'
using System; using System.Runtime.InteropServices;
public static class CapnodeInput {
  [StructLayout(LayoutKind.Sequential)] public struct MOUSEINPUT { public int dx; public int dy; public uint mouseData; public uint dwFlags; public uint time; public IntPtr extra; }
  [StructLayout(LayoutKind.Sequential)] public struct KEYBDINPUT { public ushort wVk; public ushort wScan; public uint dwFlags; public uint time; public IntPtr extra; }
  [StructLayout(LayoutKind.Explicit)] public struct UNION { [FieldOffset(0)] public MOUSEINPUT mi; [FieldOffset(0)] public KEYBDINPUT ki; }
  [StructLayout(LayoutKind.Sequential)] public struct INPUT { public uint type; public UNION u; }
  [DllImport("user32.dll", SetLastError = true)] static extern uint SendInput(uint n, INPUT[] inputs, int size);
  [DllImport("user32.dll")] public static extern bool SetCursorPos(int x, int y);
  [DllImport("user32.dll")] static extern short VkKeyScan(char ch);
  static void Send(INPUT input) { if (SendInput(1, new INPUT[] { input }, Marshal.SizeOf(typeof(INPUT))) != 1) throw new Exception("SendInput was blocked (another desktop or a higher-integrity window has the input)"); }
  public static void Mouse(uint flags, int data) { var i = new INPUT(); i.type = 0; i.u.mi.dwFlags = flags; i.u.mi.mouseData = (uint)data; Send(i); }
  public static void Key(ushort vk, bool down) { var i = new INPUT(); i.type = 1; i.u.ki.wVk = vk; i.u.ki.dwFlags = down ? 0u : 2u; Send(i); }
  public static void Unicode(char c, bool down) { var i = new INPUT(); i.type = 1; i.u.ki.wScan = c; i.u.ki.dwFlags = 4u | (down ? 0u : 2u); Send(i); }
  public static void Char(char c, bool down) { short scan = VkKeyScan(c); if (scan == -1) Unicode(c, down); else Key((ushort)(scan & 0xff), down); }
}
'@
$steps = ConvertFrom-Json $env:CAPNODE_INPUT_STEPS
$screens = [System.Windows.Forms.Screen]::AllScreens
$buttons = @{ 1 = @(2, 4); 2 = @(0x20, 0x40); 3 = @(8, 0x10) }
foreach ($s in $steps) {
  switch ($s.k) {
    'm' { if ($s.s -ge $screens.Length) { throw "screenIndex $($s.s) does not exist" }; $b = $screens[$s.s].Bounds; [void][CapnodeInput]::SetCursorPos([int]($b.X + [Math]::Floor($s.fx * $b.Width)), [int]($b.Y + [Math]::Floor($s.fy * $b.Height))) }
    'b' { if ($s.b -ge 4) { if ($s.d) { if ($s.b -le 5) { [CapnodeInput]::Mouse(0x800, $(if ($s.b -eq 4) { 120 } else { -120 })) } else { [CapnodeInput]::Mouse(0x1000, $(if ($s.b -eq 7) { 120 } else { -120 })) } } } else { [CapnodeInput]::Mouse($buttons[[int]$s.b][$(if ($s.d) { 0 } else { 1 })], 0) } }
    'key' { [CapnodeInput]::Key([uint16]$s.c, [bool]$s.d) }
    'ch' { [CapnodeInput]::Char([char]$s.t, [bool]$s.d) }
    't' { foreach ($c in $s.t.ToCharArray()) { [CapnodeInput]::Unicode($c, $true); [CapnodeInput]::Unicode($c, $false) } }
    'p' { Start-Sleep -Milliseconds $s.ms }
  }
}`;

/** The helper process one action runs: program, arguments and the steps in its environment. */
export interface HelperCommand {
  readonly program: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
}

/** The command line of the macOS or Windows helper for `steps` (what the unit tests pin). */
export function inputHelperCommand(steps: readonly InputStep[], platform: 'darwin' | 'win32'): HelperCommand {
  const env = { CAPNODE_INPUT_STEPS: JSON.stringify(helperSteps(steps, platform)) };
  if (platform === 'darwin') return { program: 'osascript', args: ['-l', 'JavaScript', '-e', MAC_INPUT_SCRIPT], env };
  return { program: 'powershell', args: powershellArgs(WINDOWS_INPUT_SCRIPT), env };
}

/** Longest a helper may run beyond the pauses its steps ask for. */
const HELPER_SLACK_MS = 30_000;

/** macOS or Windows: one helper process per action; a cancel kills it, which stops typing. */
export function createHelperInputBackend(platform: 'darwin' | 'win32'): InputBackend {
  return {
    async run(steps, ctx: InputContext) {
      const command = inputHelperCommand(steps, platform);
      const file = (await findExecutable(command.program, { env: ctx.env })) ?? (platform === 'win32' ? await findExecutable('pwsh', { env: ctx.env }) : undefined);
      if (!file) throw new CapabilityError('unavailable', `unavailable here: ${platform === 'darwin' ? 'osascript (part of macOS)' : 'Windows PowerShell'} is not on PATH.`);
      const pauses = steps.reduce((sum, step) => sum + (step.kind === 'pause' ? step.ms : step.kind === 'text' ? step.text.length * 20 : 0), 0);
      await runMedia({ file, args: command.args, env: { ...ctx.env, ...command.env }, signal: ctx.signal, timeoutMs: pauses + HELPER_SLACK_MS, maxOutputBytes: 1 << 16, what: 'the computer action', killGraceMs: 200 });
    },
  };
}
