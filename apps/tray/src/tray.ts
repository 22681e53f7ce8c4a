import type { PendingApproval } from '@capnode/capabilities';
import type { LogLevel } from '@capnode/toolkit';
import { runTrayAction, type TrayDesktop } from './actions.js';
import { notifyApproval, openInBrowser, writeClipboard } from './desktop.js';
import { isTrayError } from './errors.js';
import { bundledTrayHelper, runnableTrayHelper, trayHelperCacheDir } from './helperBinary.js';
import type { TrayHostLink } from './hostLink.js';
import { loadTrayIcons } from './icons.js';
import { buildTrayMenu, trayActionFor, type TrayItemKey, type TrayState } from './menu.js';
import { startTrayHelper, type TrayHelper, type TrayIconImages } from './trayHelper.js';

export type TrayLogLevel = LogLevel;

export interface TrayOptions {
  /** The host the tray shows and drives (see `createInProcessLink`, `createAttachedLink`). Closed with the tray. */
  readonly link: TrayHostLink;
  /** The native helper; default systray2's, made runnable (see `runnableTrayHelper`). */
  readonly helperFile?: string;
  /** Default the committed icons (`loadTrayIcons`). */
  readonly icons?: TrayIconImages;
  /** Environment of the helper and the desktop tools. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** How often the host status is read. Default 2 s. */
  readonly statusIntervalMs?: number;
  /** Clipboard and browser; default the platform tools (`writeClipboard`, `openInBrowser`). */
  readonly desktop?: TrayDesktop;
  /**
   * Shows the notification of a new pending approval; `'open'` when the person asked to see it.
   * `signal` aborts when the approval is answered elsewhere or the tray closes. Default `notifyApproval`.
   */
  readonly notify?: (approval: PendingApproval, signal: AbortSignal) => Promise<'open' | 'shown'>;
  readonly onLog?: (level: TrayLogLevel, message: string) => void;
  /** Aborting closes the tray. */
  readonly signal?: AbortSignal;
}

/** A running tray icon. */
export interface Tray {
  readonly helper: TrayHelper;
  state(): TrayState;
  /** Does what clicking the item `key` does (the helper's clicks arrive here too). */
  click(key: TrayItemKey): Promise<void>;
  /** Resolves once the tray has closed: Quit, the helper exiting, `signal`, or `close()`. */
  readonly closed: Promise<void>;
  /** Closes the helper and the link (an in-process host stops). Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** How long a failed action's message stays in the status line. */
const ERROR_SHOWN_MS = 15_000;

function defaultLog(level: TrayLogLevel, message: string): void {
  process.stderr.write(`capnode-tray ${level}: ${message}\n`);
}

function defaultHelperFile(env: NodeJS.ProcessEnv): string {
  return runnableTrayHelper(bundledTrayHelper(), trayHelperCacheDir(env));
}

/**
 * Shows the tray icon for `options.link`'s host: status polled every 2 s, approvals followed live
 * (a new one raises a notification whose action opens the dashboard's approvals page), clicks
 * performed through the host's admin routes and the platform's clipboard and browser.
 * @throws TrayError `helper_unavailable` when the icon cannot be shown (the link is closed then).
 */
export async function startTray(options: TrayOptions): Promise<Tray> {
  const env = options.env ?? process.env;
  const log = options.onLog ?? defaultLog;
  const link = options.link;
  const desktop: TrayDesktop = options.desktop ?? { writeClipboard: (text) => writeClipboard(text, { env }), openInBrowser: (url) => openInBrowser(url, { env }) };
  const notify = options.notify ?? ((approval: PendingApproval, signal: AbortSignal) => notifyApproval(approval, { env, signal }));
  let state: TrayState = { mode: link.mode, connection: 'connecting', pendingApprovals: 0, hasToken: link.mcpToken() !== undefined };
  let helper: TrayHelper;
  try {
    helper = await startTrayHelper(buildTrayMenu(state), {
      file: options.helperFile ?? defaultHelperFile(env),
      icons: options.icons ?? loadTrayIcons(),
      env,
      onClick: (key) => void tray.click(key),
    });
  } catch (error) {
    await link.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  let errorTimer: ReturnType<typeof setTimeout> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const update = (change: Partial<TrayState>) => {
    state = { ...state, ...change };
    if (!closing) helper.render(buildTrayMenu(state));
  };
  const showError = (message: string) => {
    clearTimeout(errorTimer);
    update({ lastError: message });
    errorTimer = setTimeout(() => update({ lastError: undefined }), ERROR_SHOWN_MS);
    errorTimer.unref?.();
  };
  const refresh = async () => {
    try {
      const status = await link.status();
      if (!closing) update({ connection: 'connected', status, hasToken: link.mcpToken() !== undefined });
    } catch (error) {
      if (!closing) update({ connection: 'unreachable', hasToken: link.mcpToken() !== undefined });
      if (!isTrayError(error) || error.code !== 'host_unreachable') log('warning', (error as Error).message);
    }
  };
  const poll = setInterval(() => void refresh(), options.statusIntervalMs ?? 2_000);
  poll.unref?.();

  /** The notification of each pending approval, aborted (notify-send ends) once it is answered or the tray closes. */
  const notified = new Map<string, AbortController>();
  const openApprovals = () => void tray.click('approvals');
  const stopApprovals = link.watchApprovals((pending) => {
    const ids = new Set(pending.map((approval) => approval.id));
    for (const [id, controller] of notified) {
      if (ids.has(id)) continue;
      controller.abort();
      notified.delete(id);
    }
    for (const approval of pending) {
      if (notified.has(approval.id) || closing) continue;
      const controller = new AbortController();
      notified.set(approval.id, controller);
      notify(approval, controller.signal).then(
        (answer) => answer === 'open' && !closing && openApprovals(),
        (error: unknown) => controller.signal.aborted || log('info', `no desktop notification for approval ${approval.id}: ${(error as Error).message}`),
      );
    }
    update({ pendingApprovals: pending.length });
  });

  const onAbort = () => void tray.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  void helper.exited.then(() => void tray.close());

  const tray: Tray = {
    helper,
    state: () => state,
    async click(key) {
      const action = trayActionFor(key, state);
      if (!action || closing) return;
      try {
        const done = await runTrayAction(action, { link, desktop, mcpUrl: () => (state.status?.mcp.state === 'listening' ? state.status.mcp.url : undefined), quit: () => void tray.close() });
        if (action.type === 'quit') return;
        clearTimeout(errorTimer);
        update({ lastError: undefined });
        if (done) log('info', done);
        if (action.type === 'patch-settings') await refresh();
      } catch (error) {
        const message = action.type === 'patch-settings' ? `could not ${action.describe}: ${(error as Error).message}` : (error as Error).message;
        log('warning', message);
        showError(message);
      }
    },
    closed,
    close() {
      closing ??= (async () => {
        options.signal?.removeEventListener('abort', onAbort);
        clearInterval(poll);
        clearTimeout(errorTimer);
        stopApprovals();
        for (const controller of notified.values()) controller.abort();
        await helper.close();
        await link.close();
        resolveClosed();
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => tray.close(),
  };
  await refresh();
  return tray;
}
