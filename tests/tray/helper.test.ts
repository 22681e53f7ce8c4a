import { chmodSync, copyFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTrayMenu, type TrayItemKey, type TrayState } from '../../apps/tray/src/menu.js';
import { bundledTrayHelper, runnableTrayHelper } from '../../apps/tray/src/helperBinary.js';
import { loadTrayIcons } from '../../apps/tray/src/icons.js';
import { startTrayHelper } from '../../apps/tray/src/trayHelper.js';
import { isTrayError } from '../../apps/tray/src/errors.js';
import { startTestDisplay, type TestDisplay } from '../support/display.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';
import { clickMenuItem, findTrayMenu, menuItems, trayIconFile } from './dbusMenu.js';

const listening: TrayState = {
  mode: 'in-process',
  connection: 'connected',
  status: { mcp: { state: 'listening', url: 'http://127.0.0.1:8765/' }, node: { enabled: false, state: 'disabled' } },
  pendingApprovals: 0,
  hasToken: true,
};

describe.runIf(process.platform === 'linux')('the real systray2 helper (tray_linux_release) under Xvfb, driven through its JSON-lines protocol', () => {
  let display: TestDisplay;
  const cache = tempDir('capnode-tray-cache-');
  const icons = loadTrayIcons();

  beforeAll(async () => {
    display = await startTestDisplay();
  });
  afterAll(async () => {
    await display?.close();
    cache[Symbol.dispose]();
  });

  it('reports ready, shows the menu, takes icon and item updates, reports clicks, and exits on the exit action', async () => {
    const clicks: TrayItemKey[] = [];
    const file = runnableTrayHelper(bundledTrayHelper(), cache.path);
    await using helper = await startTrayHelper(buildTrayMenu(listening), { file, icons, env: display.env, onClick: (key) => clicks.push(key) });
    const name = await findTrayMenu(display.busAddress, { pid: helper.pid! });

    const items = await menuItems(display.busAddress, name);
    const expected = buildTrayMenu(listening).items;
    expect(items.map((entry) => (entry.separator ? '---' : entry.label))).toEqual(expected.map((entry) => (entry.separator ? '---' : entry.title)));
    expect(items.map((entry) => entry.label)).toEqual(expect.arrayContaining(['capnode: MCP on http://127.0.0.1:8765/', 'Approvals (0)', 'Pause MCP server', 'Gateway node mode: off', 'Copy MCP URL', 'Copy token', 'Quit']));
    expect(items.find((entry) => entry.label.startsWith('capnode:'))?.enabled).toBe(false);
    expect(readFileSync(await trayIconFile(display.busAddress, name))).toEqual(icons.ok);

    // Two approvals arrive: the count changes in place and the icon turns to attention.
    helper.render(buildTrayMenu({ ...listening, pendingApprovals: 2 }));
    await eventually(async () => (await menuItems(display.busAddress, name)).some((entry) => entry.label === 'Approvals (2)'), { what: 'Approvals (2) in the menu' });
    await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.attention), { what: 'the attention icon' });

    // The listener fails: error icon, the reason in the status line, Copy MCP URL disabled.
    helper.render(buildTrayMenu({ ...listening, status: { mcp: { state: 'error', error: 'port 8765 on 127.0.0.1 is already in use' } } }));
    await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.error), { what: 'the error icon' });
    const failed = await menuItems(display.busAddress, name);
    expect(failed.find((entry) => entry.label.startsWith('capnode:'))?.label).toBe('capnode: MCP error — port 8765 on 127.0.0.1 is already in use');
    expect(failed.find((entry) => entry.label === 'Copy MCP URL')?.enabled).toBe(false);

    helper.render(buildTrayMenu(listening));
    await eventually(async () => (await menuItems(display.busAddress, name)).some((entry) => entry.label === 'Pause MCP server' && entry.enabled), { what: 'Pause MCP server enabled' });
    await clickMenuItem(display.busAddress, name, 'Pause MCP server');
    await clickMenuItem(display.busAddress, name, 'Copy token');
    await eventually(() => clicks.length === 2, { what: 'two clicks' });
    expect(clicks).toEqual(['mcp', 'copyToken']);

    await helper.close();
    expect(await helper.exited).toEqual({ code: 0, signal: null });
  });

  it('a helper without a display fails with a TrayError that names the fix, and leaves no process behind', async () => {
    const file = runnableTrayHelper(bundledTrayHelper(), cache.path);
    const env = { ...display.env };
    delete env.DISPLAY;
    const failure = await startTrayHelper(buildTrayMenu(listening), { file, icons, env, onClick: () => {} }).catch((error: unknown) => error);
    expect(isTrayError(failure) && failure.code).toBe('helper_unavailable');
    expect((failure as Error).message).toMatch(/DISPLAY is not set/);
    expect((failure as Error).message).toMatch(/capnode serve/);
  });

  it('a helper installed without its execute bit is copied once into the cache as 0755; an executable one is used in place', () => {
    using source = tempDir('capnode-tray-src-');
    const plain = join(source.path, 'tray_linux_release');
    copyFileSync(bundledTrayHelper(), plain);
    chmodSync(plain, 0o644);
    const copy = runnableTrayHelper(plain, join(cache.path, 'copies'));
    expect(copy.startsWith(join(cache.path, 'copies'))).toBe(true);
    expect(statSync(copy).mode & 0o777).toBe(0o755);
    expect(statSync(join(cache.path, 'copies')).mode & 0o777).toBe(0o700);
    expect(runnableTrayHelper(plain, join(cache.path, 'copies'))).toBe(copy);
    chmodSync(plain, 0o755);
    expect(runnableTrayHelper(plain, join(cache.path, 'copies'))).toBe(plain);
    expect(() => runnableTrayHelper(join(source.path, 'missing'), cache.path)).toThrow(/missing or unreadable/);
  });
});
