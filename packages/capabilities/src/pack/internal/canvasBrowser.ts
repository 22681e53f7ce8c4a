import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { delay, waitFor } from '@capnode/toolkit';
import { createCdpConnection, type CdpConnection } from './cdpPipe.js';

/** Where and how big the canvas window is; `-1` for x or y leaves the position to the window manager. */
export interface CanvasPlacement {
  readonly x?: number | undefined;
  readonly y?: number | undefined;
  readonly width?: number | undefined;
  readonly height?: number | undefined;
}

/** Options of {@link launchCanvasBrowser}. */
export interface CanvasBrowserOptions {
  /** The Chromium executable (see `findChromiumExecutable`). */
  readonly executable: string;
  /** The canvas's own profile, never the user's everyday one. */
  readonly profileDir: string;
  /** DISPLAY, XAUTHORITY, WAYLAND_DISPLAY, HOME … for the browser. */
  readonly env: NodeJS.ProcessEnv;
  readonly placement?: CanvasPlacement | undefined;
  /** How long the browser may take to show its window. Default 30 000 ms (a loaded machine is slow to start it). */
  readonly launchTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A running canvas browser: one `--app` window, attached over DevTools. */
export interface CanvasBrowser {
  readonly cdp: CdpConnection;
  /** The DevTools session of the window's page. */
  readonly sessionId: string;
  readonly windowId: number;
  /** Resolves when the browser process has exited (closed by us, by the user, or crashed). */
  readonly exited: Promise<void>;
  readonly running: boolean;
  /** Asks the browser to close, then kills its process group if it lingers. */
  close(): Promise<void>;
}

const DEFAULT_WIDTH = 800;
const DEFAULT_HEIGHT = 600;
const BLANK_PAGE = 'data:text/html,<title>capnode canvas</title>';

/** The command line: an app window (no tabs, no address bar) on a private profile, DevTools over the pipe only. */
export function canvasBrowserArgs(profileDir: string, placement: CanvasPlacement = {}, asRoot = false): string[] {
  const x = placement.x ?? -1;
  const y = placement.y ?? -1;
  return [
    `--app=${BLANK_PAGE}`,
    `--user-data-dir=${profileDir}`,
    '--remote-debugging-pipe',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-sync',
    '--disable-extensions',
    '--disable-component-update',
    '--disable-background-networking',
    '--disable-features=Translate,MediaRouter',
    '--password-store=basic',
    '--class=capnode-canvas',
    `--window-size=${placement.width ?? DEFAULT_WIDTH},${placement.height ?? DEFAULT_HEIGHT}`,
    ...(x !== -1 && y !== -1 ? [`--window-position=${x},${y}`] : []),
    // Chromium refuses to start as root with its sandbox on; a root service (CI, containers) runs it without.
    ...(asRoot ? ['--no-sandbox'] : []),
  ];
}

interface TargetInfo {
  readonly targetId: string;
  readonly type: string;
}

async function firstPage(cdp: CdpConnection, timeoutMs: number, signal?: AbortSignal): Promise<string> {
  return waitFor(
    async (waitSignal) => {
      for (;;) {
        const { targetInfos } = await cdp.send<{ targetInfos: TargetInfo[] }>('Target.getTargets', {}, { signal: waitSignal });
        const page = targetInfos.find((target) => target.type === 'page');
        if (page) return page.targetId;
        await delay(100, { signal: waitSignal });
      }
    },
    { timeoutMs, ...(signal ? { signal } : {}) },
  );
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

async function attach(cdp: CdpConnection, options: CanvasBrowserOptions): Promise<{ sessionId: string; windowId: number }> {
  const signal = options.signal;
  const targetId = await firstPage(cdp, options.launchTimeoutMs ?? 30_000, signal);
  const sendOptions = signal ? { signal } : {};
  const { sessionId } = await cdp.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true }, sendOptions);
  await cdp.send('Page.enable', {}, { ...sendOptions, sessionId });
  const { windowId } = await cdp.send<{ windowId: number }>('Browser.getWindowForTarget', { targetId }, sendOptions);
  return { sessionId, windowId };
}

/**
 * Starts Chromium as the canvas: a headful `--app` window on the user's display, its own profile, and
 * DevTools over `--remote-debugging-pipe`. Resolves once the window's page is attached.
 * @throws when the browser does not start or show a window in time (the process is killed).
 */
export async function launchCanvasBrowser(options: CanvasBrowserOptions): Promise<CanvasBrowser> {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const child = spawn(options.executable, canvasBrowserArgs(options.profileDir, options.placement, asRoot), {
    env: options.env,
    stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const cdp = createCdpConnection(child.stdio[3] as Writable, child.stdio[4] as Readable);
  void exited.then(() => cdp.close());
  let attached: { sessionId: string; windowId: number };
  try {
    attached = await Promise.race([attach(cdp, options), exited.then(() => Promise.reject(new Error('the browser exited before it showed its window')))]);
  } catch (error) {
    cdp.close();
    killGroup(child);
    throw error;
  }
  let running = true;
  void exited.then(() => (running = false));
  return {
    cdp,
    ...attached,
    exited,
    get running() {
      return running;
    },
    async close() {
      if (!running) return;
      await cdp.send('Browser.close').catch(() => undefined);
      await waitFor(exited, { timeoutMs: 5_000 }).catch(() => killGroup(child));
      await exited;
    },
  };
}
