import { describe, expect, it } from 'vitest';
import { runTrayAction, dashboardPageUrl, type TrayDesktop } from './actions.js';
import type { SettingsPatch, TrayHostLink } from './hostLink.js';
import { buildTrayMenu, statusLine, trayActionFor, trayIcon, TRAY_ITEM_KEYS, type TrayItemKey, type TrayState } from './menu.js';

const base: TrayState = {
  mode: 'in-process',
  connection: 'connected',
  status: { mcp: { state: 'listening', url: 'http://127.0.0.1:8765/' }, node: { enabled: false, state: 'disabled' } },
  pendingApprovals: 0,
  hasToken: true,
};

const titleOf = (state: TrayState, key: TrayItemKey) => buildTrayMenu(state).items.find((item) => item.key === key)!;

describe('state → menu', () => {
  it('has every item, in order, with a status line and the listening URL', () => {
    const menu = buildTrayMenu(base);
    expect(menu.items.map((item) => item.key)).toEqual([...TRAY_ITEM_KEYS]);
    expect(menu.items.map((item) => (item.separator ? '---' : item.title))).toEqual([
      'capnode: MCP on http://127.0.0.1:8765/',
      '---',
      'Open dashboard',
      'Approvals (0)',
      'Pause MCP server',
      'Gateway node mode: off',
      'Copy MCP URL',
      'Copy token',
      '---',
      'Quit',
    ]);
    expect(titleOf(base, 'status').enabled).toBe(false);
    expect(menu.icon).toBe('ok');
  });

  it('pending approvals: attention icon and the count, in the item and the tooltip', () => {
    const state = { ...base, pendingApprovals: 3 };
    expect(trayIcon(state)).toBe('attention');
    expect(titleOf(state, 'approvals').title).toBe('Approvals (3)');
    expect(buildTrayMenu(state).tooltip).toContain('3 approvals waiting');
    expect(buildTrayMenu({ ...base, pendingApprovals: 1 }).tooltip).toContain('1 approval waiting');
  });

  it('the MCP listener in error: error icon (over pending approvals), the reason in the status line, no URL to copy', () => {
    const state: TrayState = { ...base, pendingApprovals: 2, status: { mcp: { state: 'error', error: 'port 8765 on 127.0.0.1 is already in use' } } };
    expect(trayIcon(state)).toBe('error');
    expect(statusLine(state)).toBe('capnode: MCP error — port 8765 on 127.0.0.1 is already in use');
    expect(titleOf(state, 'copyUrl').enabled).toBe(false);
    expect(titleOf(state, 'mcp').title).toBe('Pause MCP server');
  });

  it('an unreachable attached host: error icon, everything but Quit (and a present token) disabled', () => {
    const state: TrayState = { ...base, mode: 'attached', connection: 'unreachable', status: undefined, hasToken: false };
    expect(trayIcon(state)).toBe('error');
    expect(statusLine(state)).toBe('capnode: host not reachable');
    const enabled = buildTrayMenu(state).items.filter((item) => item.enabled && !item.separator).map((item) => item.key);
    expect(enabled).toEqual(['quit']);
    expect(titleOf(state, 'quit').tooltip).toMatch(/host keeps running/);
  });

  it("shows OpenAgent's phase in the tooltip while its switch is on", () => {
    const on = { mode: 'attached' as const, connection: 'connected' as const, pendingApprovals: 0, hasToken: true, status: { mcp: { state: 'listening', url: 'http://127.0.0.1:1/' }, openagent: { enabled: true, phase: 'active', activeCalls: 2 } } };
    expect(buildTrayMenu(on).tooltip).toContain('OpenAgent: active (2 calls)');
    expect(buildTrayMenu({ ...on, status: { ...on.status, openagent: { enabled: false, phase: 'disabled' } } }).tooltip).not.toContain('OpenAgent');
  });

  it('paused MCP and gateway node mode on read as such', () => {
    const state: TrayState = { ...base, status: { mcp: { state: 'disabled' }, node: { enabled: true, state: 'connected' } } };
    expect(statusLine(state)).toBe('capnode: MCP server paused');
    expect(titleOf(state, 'mcp').title).toBe('Resume MCP server');
    expect(titleOf(state, 'gatewayNode').title).toBe('Gateway node mode: on');
    expect(buildTrayMenu(state).tooltip).toContain('gateway node: connected');
  });

  it('status lines are one line, clipped to 80 characters, and a failed action shows until cleared', () => {
    const long: TrayState = { ...base, status: { mcp: { state: 'error', error: `bad\nthing ${'x'.repeat(200)}` } } };
    expect(statusLine(long)).not.toContain('\n');
    expect(statusLine(long).length).toBeLessThanOrEqual(80);
    expect(statusLine({ ...base, lastError: 'could not pause the MCP server: HTTP 400' })).toBe('capnode: could not pause the MCP server: HTTP 400');
    expect(statusLine({ ...base, connection: 'connecting', status: undefined })).toBe('capnode: starting…');
  });
});

describe('click → action', () => {
  it('maps each item to its action, and disabled items, separators and the status line to nothing', () => {
    expect(trayActionFor('dashboard', base)).toEqual({ type: 'open-dashboard' });
    expect(trayActionFor('approvals', base)).toEqual({ type: 'open-dashboard', page: 'approvals' });
    expect(trayActionFor('mcp', base)).toMatchObject({ type: 'patch-settings', patch: { mcp: { enabled: false } } });
    expect(trayActionFor('mcp', { ...base, status: { mcp: { state: 'disabled' } } })).toMatchObject({ type: 'patch-settings', patch: { mcp: { enabled: true } } });
    expect(trayActionFor('gatewayNode', base)).toMatchObject({ type: 'patch-settings', patch: { gateway: { enabled: true } } });
    expect(trayActionFor('gatewayNode', { ...base, status: { mcp: { state: 'listening' }, node: { enabled: true, state: 'connected' } } })).toMatchObject({ patch: { gateway: { enabled: false } } });
    expect(trayActionFor('copyUrl', base)).toEqual({ type: 'copy', what: 'mcp-url' });
    expect(trayActionFor('copyToken', base)).toEqual({ type: 'copy', what: 'token' });
    expect(trayActionFor('quit', base)).toEqual({ type: 'quit' });
    expect(trayActionFor('status', base)).toBeUndefined();
    expect(trayActionFor('separator-1', base)).toBeUndefined();
    expect(trayActionFor('copyToken', { ...base, hasToken: false })).toBeUndefined();
    expect(trayActionFor('mcp', { ...base, connection: 'unreachable' })).toBeUndefined();
  });
});

/** A link that records what the actions ask of it (the HTTP side is tested against a real host in tests/tray). */
function recordingLink(token: string | null = 'tok-123'): TrayHostLink & { patches: SettingsPatch[]; logins: number } {
  const patches: SettingsPatch[] = [];
  const link = {
    mode: 'attached' as const,
    paths: { mcpToken: '/home/u/.config/capnode/mcp-token' } as TrayHostLink['paths'],
    patches,
    logins: 0,
    status: async () => base.status!,
    watchApprovals: () => () => {},
    async patchSettings(patch: SettingsPatch) {
      patches.push(patch);
    },
    async loginUrl() {
      link.logins++;
      return 'http://127.0.0.1:9999/login?code=abc';
    },
    mcpToken: () => token ?? undefined,
    close: async () => {},
  };
  return link;
}

function recordingDesktop(): TrayDesktop & { copied: string[]; opened: string[] } {
  const copied: string[] = [];
  const opened: string[] = [];
  return { copied, opened, writeClipboard: async (text) => void copied.push(text), openInBrowser: async (url) => void opened.push(url) };
}

describe('runTrayAction', () => {
  it('pause and resume send the settings patch; node mode too', async () => {
    const link = recordingLink();
    const deps = { link, desktop: recordingDesktop(), mcpUrl: () => 'http://127.0.0.1:8765/', quit: () => {} };
    await runTrayAction(trayActionFor('mcp', base)!, deps);
    await runTrayAction(trayActionFor('mcp', { ...base, status: { mcp: { state: 'disabled' } } })!, deps);
    await runTrayAction(trayActionFor('gatewayNode', base)!, deps);
    expect(link.patches).toEqual([{ mcp: { enabled: false } }, { mcp: { enabled: true } }, { gateway: { enabled: true } }]);
  });

  it('copy token and copy URL hand the text to the clipboard writer; no token is an error naming the file', async () => {
    const desktop = recordingDesktop();
    const deps = { link: recordingLink(), desktop, mcpUrl: () => 'http://127.0.0.1:8765/', quit: () => {} };
    expect(await runTrayAction({ type: 'copy', what: 'token' }, deps)).toBe('token copied');
    expect(await runTrayAction({ type: 'copy', what: 'mcp-url' }, deps)).toBe('MCP URL copied');
    expect(desktop.copied).toEqual(['tok-123', 'http://127.0.0.1:8765/']);
    await expect(runTrayAction({ type: 'copy', what: 'token' }, { ...deps, link: recordingLink(null) })).rejects.toThrow(/no MCP token yet \(\/home\/u\/.config\/capnode\/mcp-token\)/);
  });

  it('open dashboard gets a one-time login URL per click; approvals asks for the approvals page', async () => {
    const desktop = recordingDesktop();
    const link = recordingLink();
    const deps = { link, desktop, mcpUrl: () => undefined, quit: () => {} };
    await runTrayAction({ type: 'open-dashboard' }, deps);
    await runTrayAction({ type: 'open-dashboard', page: 'approvals' }, deps);
    expect(link.logins).toBe(2);
    expect(desktop.opened).toEqual(['http://127.0.0.1:9999/login?code=abc', 'http://127.0.0.1:9999/login?code=abc#/approvals']);
    expect(dashboardPageUrl('http://127.0.0.1:1/login?code=x', undefined)).toBe('http://127.0.0.1:1/login?code=x');
  });

  it('quit calls quit', async () => {
    let quit = 0;
    await runTrayAction({ type: 'quit' }, { link: recordingLink(), desktop: recordingDesktop(), mcpUrl: () => undefined, quit: () => void quit++ });
    expect(quit).toBe(1);
  });
});
