import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComputerCapability, createScreenCapability, type RecordingNotifier } from '@capnode/capabilities/pack';
import { eventually } from '../support/poll.js';
import { hasXvfb, startXvfb, type Xvfb } from '../support/xvfb.js';
import { hasXev, startXevWindow, type XevWindow } from '../support/xevWindow.js';
import { callRaw, failureCode, startMediaHost, type RawToolResult } from './screenSupport.js';
import type { TestHost } from '../support/testHost.js';

const ready = hasXvfb() && hasXev();

/** A host with screen + computer on the Xvfb display, both consents allowed. */
function startComputerHost(xvfb: Xvfb, notify: RecordingNotifier): Promise<TestHost> {
  const options = { env: xvfb.env, notify };
  return startMediaHost([createScreenCapability(options), createComputerCapability(options)], { consent: { screen: 'allow', computer: 'allow' } });
}

async function snapshot(host: TestHost, args: Record<string, unknown> = {}): Promise<{ id: string; width: number; height: number }> {
  const shot = await callRaw(host, 'screen.snapshot', { format: 'jpeg', ...args });
  expect(shot.isError).not.toBe(true);
  const fields = shot.structuredContent!;
  return { id: fields.displayFrameId as string, width: fields.width as number, height: fields.height as number };
}

function refusal(result: RawToolResult): { code: string | undefined; text: string } {
  expect(result.isError).toBe(true);
  return { code: failureCode(result), text: result.content.find((part) => part.type === 'text')?.text ?? '' };
}

describe.skipIf(!ready)('computer.act on a real Xvfb display (XTEST), over MCP HTTP', () => {
  let xvfb: Xvfb;
  let xev: XevWindow;
  const notices: { title: string; body: string }[] = [];
  const notify: RecordingNotifier = async (notice) => {
    notices.push(notice);
  };

  beforeAll(async () => {
    xvfb = await startXvfb({ width: 1280, height: 800 });
    xev = await startXevWindow(xvfb.env, { x: 200, y: 100, width: 600, height: 400 });
  });
  afterAll(async () => {
    await xev?.close();
    await xvfb?.close();
  });

  it('screen.snapshot returns a displayFrameId and its width; a click in a downscaled frame lands on the real window at the mapped point', async () => {
    await using host = await startComputerHost(xvfb, notify);
    const frame = await snapshot(host, { maxWidth: 640, executionId: '4b6f3d1e-2c3a-4d5e-8f90-123456789abc' });
    expect(frame).toMatchObject({ width: 640, height: 400 });
    expect(frame.id).toMatch(/^cn1-[0-9a-f]{32}$/);
    const before = xev.presses.length;
    // Pixel (250, 150) of a half-size frame is root (500..501, 300..301).
    const click = await callRaw(host, 'computer.act', { action: 'left_click', x: 250, y: 150, displayFrameId: frame.id, refWidth: 640, executionId: '4b6f3d1e-2c3a-4d5e-8f90-123456789abc' });
    expect(click.isError).not.toBe(true);
    expect(click.structuredContent).toEqual({ ok: true, effect: 'unverifiable', details: { action: 'left_click' } });
    // The call returns once the X server handled the input; xev prints it a moment later.
    const press = await eventually(() => xev.presses[before], { what: 'the ButtonPress on the xev window' });
    expect(press).toEqual({ button: 1, rootX: 501, rootY: 301 });
    await eventually(() => xev.releases.length > before, { what: 'the ButtonRelease' });
    expect(notices.at(-1)).toMatchObject({ title: 'capnode is controlling your computer' });
    expect(notices.at(-1)!.body).toContain('left_click');
  });

  it('right, middle, double clicks and scroll reach the window with their buttons', async () => {
    await using host = await startComputerHost(xvfb, notify);
    const frame = await snapshot(host);
    const before = xev.presses.length;
    const act = (args: Record<string, unknown>) => callRaw(host, 'computer.act', { displayFrameId: frame.id, refWidth: frame.width, ...args });
    expect((await act({ action: 'right_click', x: 300, y: 200 })).isError).not.toBe(true);
    expect((await act({ action: 'middle_click', x: 301, y: 200 })).isError).not.toBe(true);
    expect((await act({ action: 'double_click', x: 302, y: 200 })).isError).not.toBe(true);
    expect((await act({ action: 'scroll', x: 303, y: 200, scrollDirection: 'down', scrollAmount: 2 })).isError).not.toBe(true);
    await eventually(() => xev.presses.length >= before + 6, { what: 'six button presses' });
    expect(xev.presses.slice(before).map((press) => press.button)).toEqual([3, 2, 1, 1, 5, 5]);
    expect(xev.presses.at(-1)).toMatchObject({ rootX: 303, rootY: 200 });
  });

  it('drag presses at the start and releases at the end; mouse down/up and hold_key reach the window', async () => {
    await using host = await startComputerHost(xvfb, notify);
    const frame = await snapshot(host);
    const act = (args: Record<string, unknown>) => callRaw(host, 'computer.act', { displayFrameId: frame.id, refWidth: frame.width, ...args });
    const presses = xev.presses.length;
    const releases = xev.releases.length;
    expect((await act({ action: 'left_click_drag', fromX: 300, fromY: 150, x: 500, y: 350 })).isError).not.toBe(true);
    await eventually(() => xev.releases.length > releases, { what: 'the drag release' });
    expect(xev.presses[presses]).toEqual({ button: 1, rootX: 300, rootY: 150 });
    expect(xev.releases[releases]).toEqual({ button: 1, rootX: 500, rootY: 350 });
    expect((await act({ action: 'left_mouse_down', x: 250, y: 250 })).isError).not.toBe(true);
    expect((await act({ action: 'left_mouse_up', x: 260, y: 260 })).isError).not.toBe(true);
    await eventually(() => xev.releases.length > releases + 1, { what: 'the button up' });
    expect(xev.presses[presses + 1]).toEqual({ button: 1, rootX: 250, rootY: 250 });
    expect(xev.releases[releases + 1]).toEqual({ button: 1, rootX: 260, rootY: 260 });
    const keys = xev.keysyms.length;
    const started = Date.now();
    expect((await callRaw(host, 'computer.act', { action: 'hold_key', keys: 'shift', durationMs: 300 })).isError).not.toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await eventually(() => xev.keysyms.length > keys, { what: 'the held Shift' });
    expect(xev.keysyms.slice(keys)).toEqual([0xffe1]);
  });

  it('typing reaches the focused window: shifted, Latin-1 and characters the keymap lacks (spare keycode), then key combos', async () => {
    await using host = await startComputerHost(xvfb, notify);
    const frame = await snapshot(host);
    // No window manager: focus follows the pointer, so click into the window first, as a user would.
    await callRaw(host, 'computer.act', { action: 'left_click', x: 400, y: 300, displayFrameId: frame.id, refWidth: frame.width });
    const start = xev.keysyms.length;
    const typed = await callRaw(host, 'computer.act', { action: 'type', text: 'Hello, World! é€→' });
    expect(typed.isError).not.toBe(true);
    await eventually(() => xev.text().length >= 'Hello, World! é€→'.length, { what: 'the typed text' });
    expect(xev.keysyms.slice(start).filter((keysym) => keysym !== 0xffe1).map((keysym) => (keysym >= 0x01000000 ? String.fromCodePoint(keysym - 0x01000000) : String.fromCharCode(keysym))).join('')).toBe('Hello, World! é€→');
    const combo = await callRaw(host, 'computer.act', { action: 'key', keys: 'ctrl+shift+t Return' });
    expect(combo.isError).not.toBe(true);
    await eventually(() => xev.keysyms.includes(0xff0d), { what: 'Return' });
    expect(xev.keysyms.slice(-4)).toEqual([0xffe3, 0xffe1, 0x54, 0xff0d]);
  });

  it('refuses a stale frame, another execution\'s frame, a wrong refWidth, out-of-bounds coordinates and an unknown key, and clicks nothing', async () => {
    await using host = await startComputerHost(xvfb, notify);
    const old = await snapshot(host, { executionId: 'exec-a' });
    const current = await snapshot(host, { executionId: 'exec-a' });
    const other = await snapshot(host, { executionId: 'exec-b' });
    const presses = xev.presses.length;
    const keys = xev.keysyms.length;
    const act = (args: Record<string, unknown>) => callRaw(host, 'computer.act', { action: 'left_click', x: 400, y: 300, executionId: 'exec-a', refWidth: 1280, ...args });

    const staleResult = await act({ displayFrameId: old.id });
    const stale = refusal(staleResult);
    expect(stale.code).toBe('invalid_arguments');
    expect(staleResult._meta?.['capnode/failure']).toEqual({ code: 'invalid_arguments', reason: 'COMPUTER_STALE_FRAME' });
    expect(stale.text).toMatch(/^COMPUTER_STALE_FRAME: /);
    expect(refusal(await act({ displayFrameId: other.id })).text).toMatch(/^COMPUTER_STALE_FRAME: /);
    expect(refusal(await act({ displayFrameId: 'cn1-00000000000000000000000000000000' })).text).toMatch(/^COMPUTER_STALE_FRAME: /);
    expect(refusal(await act({ displayFrameId: undefined })).text).toMatch(/^COMPUTER_STALE_FRAME: .*screenshot/);
    const width = refusal(await act({ displayFrameId: current.id, refWidth: 1024 }));
    expect(width).toMatchObject({ code: 'invalid_arguments' });
    expect(width.text).toContain('refWidth 1024');
    expect(refusal(await act({ displayFrameId: current.id, screenIndex: 1 })).text).toMatch(/^COMPUTER_STALE_FRAME: /);
    const outside = refusal(await act({ displayFrameId: current.id, x: 1280, y: 10 }));
    expect(outside).toMatchObject({ code: 'invalid_arguments' });
    expect(outside.text).toMatch(/^COMPUTER_INVALID_REQUEST: .*outside the 1280×800 frame/);
    expect((await act({ displayFrameId: current.id, x: 1280, y: 10 }))._meta?.['capnode/failure']).toEqual({ code: 'invalid_arguments', reason: 'COMPUTER_INVALID_REQUEST' });
    expect(refusal(await act({ displayFrameId: current.id, x: -1 })).text).toMatch(/outside/);
    expect(refusal(await act({ action: 'left_click_drag', displayFrameId: current.id, fromX: 10, fromY: 5000 })).text).toMatch(/drag start/);
    const keyResult = await callRaw(host, 'computer.act', { action: 'key', keys: 'ctrl+Hyper_Q' });
    expect(keyResult._meta?.['capnode/failure']).toEqual({ code: 'invalid_arguments', reason: 'COMPUTER_UNSUPPORTED_KEY' });
    const key = refusal(keyResult);
    expect(key).toMatchObject({ code: 'invalid_arguments' });
    expect(key.text).toMatch(/^COMPUTER_UNSUPPORTED_KEY: unknown key "Hyper_Q"/);
    expect(refusal(await callRaw(host, 'computer.act', { action: 'left_click', x: 1, y: 1, displayFrameId: current.id, refWidth: 1280, executionId: 'exec-a', modifiers: 'ctrl+q' })).text).toMatch(/unknown modifier/);
    expect(failureCode(await callRaw(host, 'computer.act', { action: 'scroll' }))).toBe('invalid_arguments');
    expect(failureCode(await callRaw(host, 'computer.act', { action: 'list_apps' }))).toBe('invalid_arguments');
    expect(failureCode(await callRaw(host, 'computer.act', { action: 'left_click', windowRef: 'w1', x: 1, y: 1 }))).toBe('unsupported');

    // The current frame still works, and nothing reached the window before it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(xev.presses.length).toBe(presses);
    expect(xev.keysyms.length).toBe(keys);
    expect((await act({ displayFrameId: current.id })).isError).not.toBe(true);
    await eventually(() => xev.presses.length === presses + 1, { what: 'the one allowed click' });
  });

  it('computer consent: off by default refuses before any input; ask shows the exact action and runs it once allowed', async () => {
    const capabilities = [createScreenCapability({ env: xvfb.env, notify }), createComputerCapability({ env: xvfb.env, notify })];
    {
      await using host = await startMediaHost(capabilities, { consent: { screen: 'allow' } });
      const frame = await snapshot(host);
      const before = xev.presses.length;
      const off = await callRaw(host, 'computer.act', { action: 'left_click', x: 400, y: 300, displayFrameId: frame.id, refWidth: frame.width });
      expect(refusal(off)).toMatchObject({ code: 'consent_required', text: expect.stringContaining('capnode consent set computer ask') });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(xev.presses.length).toBe(before);
    }
    await using host = await startMediaHost(capabilities, { consent: { screen: 'allow', computer: 'ask' } });
    host.answerWith('allow-once');
    const frame = await snapshot(host);
    const before = xev.presses.length;
    const asked = await callRaw(host, 'computer.act', { action: 'left_click', x: 401, y: 301, displayFrameId: frame.id, refWidth: frame.width });
    expect(asked.isError).not.toBe(true);
    expect(host.asked).toHaveLength(1);
    expect(host.asked[0]!.summary).toContain('computer.act asks for computer access with');
    expect(host.asked[0]!.summary).toContain('"action":"left_click"');
    expect(host.asked[0]!.summary).toContain('"x":401');
    await eventually(() => xev.presses[before], { what: 'the allowed click' });
  });

  it('cancelling a long type stops the keystrokes at once', async () => {
    await using host = await startComputerHost(xvfb, notify);
    const frame = await snapshot(host);
    await callRaw(host, 'computer.act', { action: 'left_click', x: 400, y: 300, displayFrameId: frame.id, refWidth: frame.width });
    const start = xev.keysyms.length;
    const controller = new AbortController();
    const call = callRaw(host, 'computer.act', { action: 'type', text: 'x'.repeat(5000) }, { signal: controller.signal }).catch((error: unknown) => error);
    await eventually(() => xev.keysyms.length - start >= 20, { what: 'the first keystrokes' });
    controller.abort();
    await call;
    // xev may still be printing what the server delivered before the cancel (it lags on a busy
    // machine): wait until its count stands still for a second, then it must stay there.
    let last = -1;
    let since = Date.now();
    await eventually(
      () => {
        const now = xev.keysyms.length;
        if (now !== last) [last, since] = [now, Date.now()];
        return Date.now() - since >= 1_000;
      },
      { what: 'the keystrokes to stop', timeoutMs: 20_000, intervalMs: 100 },
    );
    const stopped = xev.keysyms.length - start;
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(xev.keysyms.length - start).toBe(stopped);
    expect(stopped).toBeLessThan(5000);
  });
});

const cliPath = fileURLToPath(new URL('../../apps/cli/dist/bin.js', import.meta.url));

describe.skipIf(!ready || !existsSync(cliPath))('computer.act over MCP stdio (capnode mcp, the stock host with the pack)', () => {
  it('a snapshot frame, then a click and typing reach a real X window; a stale frame is refused', async () => {
    await using xvfb = await startXvfb({ width: 1024, height: 768 });
    await using xev = await startXevWindow(xvfb.env, { x: 50, y: 50, width: 400, height: 300 });
    const home = mkdtempSync(join(tmpdir(), 'capnode-computer-stdio-'));
    const settings = { consent: { screen: 'allow', computer: 'allow' }, pluginSettings: { screen: { display: xvfb.display }, computer: { display: xvfb.display } } };
    writeFileSync(join(home, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
    const client = new Client({ name: 'computer-stdio', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(xvfb.env as Record<string, string>), CAPNODE_HOME: home }, stderr: 'pipe' }));
    try {
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as unknown as RawToolResult;
      const old = (await call('screen.snapshot', { format: 'jpeg', maxWidth: 512 })).structuredContent!;
      const shot = (await call('screen.snapshot', { format: 'jpeg', maxWidth: 512 })).structuredContent!;
      expect(shot).toMatchObject({ width: 512, height: 384, displayFrameId: expect.stringMatching(/^cn1-/) });
      const stale = await call('computer.act', { action: 'left_click', x: 100, y: 100, displayFrameId: old.displayFrameId, refWidth: 512 });
      expect(refusal(stale).text).toMatch(/^COMPUTER_STALE_FRAME: /);
      const click = await call('computer.act', { action: 'left_click', x: 100, y: 100, displayFrameId: shot.displayFrameId, refWidth: 512 });
      expect(click.isError).not.toBe(true);
      // Pixel 100 of a half-size frame is root 200..201.
      expect(await eventually(() => xev.presses[0], { what: 'the click' })).toEqual({ button: 1, rootX: 201, rootY: 201 });
      expect(xev.presses).toHaveLength(1);
      expect((await call('computer.act', { action: 'type', text: 'stdio OK' })).isError).not.toBe(true);
      await eventually(() => xev.text() === 'stdio OK', { what: 'the typed text' });
    } finally {
      await client.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
