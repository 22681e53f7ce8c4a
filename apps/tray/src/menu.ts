/**
 * The tray's menu as a pure function of what the tray knows about its host, and each click as a
 * pure decision of what to do. No I/O here: the systray adapter renders {@link TrayMenu}, the action
 * runner performs {@link TrayAction}.
 */

/** The icon the tray shows: `error` (host unreachable, MCP listener failed), `attention` (approvals pending), else `ok`. */
export type TrayIconState = 'ok' | 'attention' | 'error';

/** What the tray needs of the host's status (`GET /_capnode/status`, or `host.status()` in process). */
export interface TrayHostStatus {
  readonly mcp: { readonly state: string; readonly url?: string; readonly error?: string };
  readonly node?: { readonly enabled: boolean; readonly state: string; readonly detail?: string };
  readonly execApprovals?: { readonly pending: number };
  /** OpenAgent's client capabilities channel: its switch and phase. */
  readonly openagent?: { readonly enabled: boolean; readonly phase: string; readonly activeCalls?: number };
}

/** Everything the menu depends on. */
export interface TrayState {
  /** `in-process`: the tray runs the host; `attached`: it talks to a host another process runs. */
  readonly mode: 'in-process' | 'attached';
  /** `connecting` until the first status arrives; `unreachable` while the attached host does not answer. */
  readonly connection: 'connecting' | 'connected' | 'unreachable';
  readonly status?: TrayHostStatus | undefined;
  /** Pending exec approvals (from the approval event stream). */
  readonly pendingApprovals: number;
  /** Whether a token file exists to copy. */
  readonly hasToken: boolean;
  /** The last failed action, shown in the status line until the next success. */
  readonly lastError?: string | undefined;
}

/** Stable keys of the menu items, in menu order; the adapter maps them to the helper's ids. */
export const TRAY_ITEM_KEYS = ['status', 'separator-1', 'dashboard', 'approvals', 'mcp', 'gatewayNode', 'copyUrl', 'copyToken', 'separator-2', 'quit'] as const;
export type TrayItemKey = (typeof TRAY_ITEM_KEYS)[number];

export interface TrayMenuItem {
  readonly key: TrayItemKey;
  /** `separator` items render as a line. */
  readonly separator?: boolean;
  readonly title: string;
  readonly tooltip: string;
  readonly enabled: boolean;
}

export interface TrayMenu {
  readonly icon: TrayIconState;
  readonly tooltip: string;
  /** One item per {@link TRAY_ITEM_KEYS} entry, in that order (the helper cannot add or remove items). */
  readonly items: readonly TrayMenuItem[];
}

/** What a click asks for. */
export type TrayAction =
  | { readonly type: 'open-dashboard'; readonly page?: 'approvals' }
  | { readonly type: 'patch-settings'; readonly patch: { readonly mcp?: { readonly enabled: boolean }; readonly gateway?: { readonly enabled: boolean } }; readonly describe: string }
  | { readonly type: 'copy'; readonly what: 'mcp-url' | 'token' }
  | { readonly type: 'quit' };

/** Longest status line; menus do not wrap. */
const MAX_STATUS_CHARS = 80;

function clip(text: string, max = MAX_STATUS_CHARS): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** The tray's icon for `state`. */
export function trayIcon(state: TrayState): TrayIconState {
  if (state.connection === 'unreachable') return 'error';
  if (state.status?.mcp.state === 'error') return 'error';
  if (state.pendingApprovals > 0) return 'attention';
  return 'ok';
}

/** One line for people: what the MCP server is doing (and why not, after a failure). */
export function statusLine(state: TrayState): string {
  if (state.lastError !== undefined) return clip(`capnode: ${state.lastError}`);
  if (state.connection === 'connecting') return 'capnode: starting…';
  if (state.connection === 'unreachable') return 'capnode: host not reachable';
  const mcp = state.status?.mcp;
  switch (mcp?.state) {
    case 'listening':
      return clip(`capnode: MCP on ${mcp.url ?? '(no URL)'}`);
    case 'disabled':
      return 'capnode: MCP server paused';
    case 'error':
      return clip(`capnode: MCP error — ${mcp.error ?? 'the listener failed'}`);
    case 'starting':
      return 'capnode: MCP starting…';
    default:
      return `capnode: MCP ${mcp?.state ?? 'unknown'}`;
  }
}

function tooltipFor(state: TrayState): string {
  const parts = [statusLine(state)];
  const node = state.status?.node;
  if (node?.enabled) parts.push(`gateway node: ${node.state}`);
  const openagent = state.status?.openagent;
  if (openagent?.enabled) parts.push(`OpenAgent: ${openagent.phase}${openagent.activeCalls ? ` (${openagent.activeCalls} calls)` : ''}`);
  if (state.pendingApprovals > 0) parts.push(`${state.pendingApprovals} approval${state.pendingApprovals === 1 ? '' : 's'} waiting`);
  return parts.join(' · ');
}

function item(key: TrayItemKey, title: string, enabled: boolean, tooltip = ''): TrayMenuItem {
  return { key, title, tooltip, enabled };
}

/** The whole menu for `state`. */
export function buildTrayMenu(state: TrayState): TrayMenu {
  const reachable = state.connection === 'connected';
  const mcpState = state.status?.mcp.state;
  const paused = mcpState === 'disabled';
  const nodeOn = state.status?.node?.enabled === true;
  const url = mcpState === 'listening' ? state.status?.mcp.url : undefined;
  const items: TrayMenuItem[] = [
    item('status', statusLine(state), false, state.status?.mcp.error ?? ''),
    { key: 'separator-1', separator: true, title: '', tooltip: '', enabled: true },
    item('dashboard', 'Open dashboard', reachable, 'Open the capnode dashboard in the browser'),
    item('approvals', `Approvals (${state.pendingApprovals})`, reachable, 'Answer pending exec approvals in the dashboard'),
    item('mcp', paused ? 'Resume MCP server' : 'Pause MCP server', reachable && mcpState !== undefined, paused ? 'Start the local MCP listener again' : 'Stop the local MCP listener (clients are refused until resumed)'),
    item('gatewayNode', `Gateway node mode: ${nodeOn ? 'on' : 'off'}`, reachable, nodeOn ? 'Disconnect this machine from the OpenClaw gateway' : 'Connect this machine to the OpenClaw gateway as a gateway node'),
    item('copyUrl', 'Copy MCP URL', url !== undefined, url ?? 'The MCP server is not listening'),
    item('copyToken', 'Copy token', state.hasToken, 'Copy the MCP bearer token'),
    { key: 'separator-2', separator: true, title: '', tooltip: '', enabled: true },
    item('quit', 'Quit', true, state.mode === 'in-process' ? 'Stop the capnode host and quit' : 'Quit the tray (the host keeps running)'),
  ];
  return { icon: trayIcon(state), tooltip: tooltipFor(state), items };
}

/** What clicking `key` does in `state`; `undefined` for items that do nothing (status line, separators, disabled ones). */
export function trayActionFor(key: TrayItemKey, state: TrayState): TrayAction | undefined {
  const menuItem = buildTrayMenu(state).items.find((entry) => entry.key === key);
  if (!menuItem || menuItem.separator || !menuItem.enabled) return undefined;
  switch (key) {
    case 'dashboard':
      return { type: 'open-dashboard' };
    case 'approvals':
      return { type: 'open-dashboard', page: 'approvals' };
    case 'mcp': {
      const resume = state.status?.mcp.state === 'disabled';
      return { type: 'patch-settings', patch: { mcp: { enabled: resume } }, describe: resume ? 'resume the MCP server' : 'pause the MCP server' };
    }
    case 'gatewayNode': {
      const on = state.status?.node?.enabled !== true;
      return { type: 'patch-settings', patch: { gateway: { enabled: on } }, describe: on ? 'turn gateway node mode on' : 'turn gateway node mode off' };
    }
    case 'copyUrl':
      return { type: 'copy', what: 'mcp-url' };
    case 'copyToken':
      return { type: 'copy', what: 'token' };
    case 'quit':
      return { type: 'quit' };
    default:
      return undefined;
  }
}
