import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { armDeadline, type DeadlineTimer } from '@capnode/toolkit';
import { TrayError } from './errors.js';
import { TRAY_ITEM_KEYS, type TrayIconState, type TrayItemKey, type TrayMenu, type TrayMenuItem } from './menu.js';

/** The icon images, one per state, as the helper takes them (PNG on Linux and macOS, ICO on Windows). */
export type TrayIconImages = Readonly<Record<TrayIconState, Buffer>>;

export interface TrayHelperOptions {
  /** The native helper to run (see `bundledTrayHelper` / `runnableTrayHelper`). */
  readonly file: string;
  readonly icons: TrayIconImages;
  /** Called with the key of each clicked item. */
  readonly onClick: (key: TrayItemKey) => void;
  /** Environment of the helper (DISPLAY, DBUS_SESSION_BUS_ADDRESS). Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** How long to wait for the helper's `ready`. Default 10 s. */
  readonly readyTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A running tray helper: render menus into it, close it. */
export interface TrayHelper {
  readonly pid: number | undefined;
  /** Sends what changed since the last render (icon and tooltip as `update-menu`, items as `update-item`). */
  render(menu: TrayMenu): void;
  /** Resolves when the helper process has exited (by itself, a crash, or `close`). */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** Asks the helper to exit (`{"type":"exit"}`), kills it after 2 s, and waits for it. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** An item as the helper's protocol carries it; `__id` is the 1-based position in {@link TRAY_ITEM_KEYS}. */
interface WireItem {
  readonly title: string;
  readonly tooltip: string;
  readonly checked: boolean;
  readonly enabled: boolean;
  readonly hidden: boolean;
  readonly __id: number;
}

/** systray2's separator marker. */
const SEPARATOR_TITLE = '<SEPARATOR>';
const CLOSE_GRACE_MS = 2_000;
const STDERR_KEEP = 4_096;

function wireItem(entry: TrayMenuItem, index: number): WireItem {
  return {
    title: entry.separator ? SEPARATOR_TITLE : entry.title,
    tooltip: entry.tooltip,
    checked: false,
    enabled: entry.enabled,
    hidden: false,
    __id: index + 1,
  };
}

function wireMenu(menu: TrayMenu, icons: TrayIconImages): { icon: string; title: string; tooltip: string; items: WireItem[] } {
  if (menu.items.length !== TRAY_ITEM_KEYS.length) throw new TypeError('a tray menu has exactly one item per TRAY_ITEM_KEYS entry');
  return { icon: icons[menu.icon].toString('base64'), title: '', tooltip: menu.tooltip, items: menu.items.map(wireItem) };
}

/** What a helper that died before `ready` says, with the fix for the usual cause. */
function startFailure(stderr: string, detail: string, env: NodeJS.ProcessEnv): TrayError {
  const display = process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY;
  const hint = display
    ? 'no graphical session (DISPLAY is not set): start the tray from your desktop session, or run the host without it: capnode serve'
    : process.platform === 'linux'
      ? 'the helper needs GTK 3 and libayatana-appindicator3 (Debian/Ubuntu: apt install libayatana-appindicator3-1) and a desktop with a tray'
      : 'the helper could not start';
  const said = stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  return new TrayError('helper_unavailable', `the tray icon cannot be shown: ${detail}${said ? ` (helper said: ${said})` : ''}; ${hint}`);
}

function waitForReady(child: ChildProcess, lines: Interface, options: TrayHelperOptions, stderr: () => string): Promise<void> {
  const env = options.env ?? process.env;
  const readyTimeoutMs = options.readyTimeoutMs ?? 10_000;
  return new Promise<void>((resolve, reject) => {
    let deadline: DeadlineTimer | undefined;
    const onLine = (line: string) => {
      if (parseLine(line)?.type === 'ready') finish();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => finish(startFailure(stderr(), `the helper exited (${signal ?? `code ${code}`}) before it was ready`, env));
    const onError = (error: Error) => finish(new TrayError('helper_unavailable', `the tray helper ${options.file} cannot run: ${error.message}`, { cause: error }));
    function finish(error?: TrayError) {
      deadline?.clear();
      lines.off('line', onLine);
      child.off('exit', onExit).off('error', onError);
      if (error) reject(error);
      else resolve();
    }
    lines.on('line', onLine);
    child.once('exit', onExit).once('error', onError);
    // Also ends at once when aborted before the helper started (a quit during start-up).
    const { signal } = options;
    deadline = armDeadline(signal === undefined ? { timeoutMs: readyTimeoutMs } : { timeoutMs: readyTimeoutMs, signal }, (_reason, timedOut) =>
      finish(
        timedOut
          ? startFailure(stderr(), `the helper did not report ready within ${readyTimeoutMs / 1000} s`, env)
          : new TrayError('helper_failed', 'aborted before the tray helper was ready'),
      ),
    );
  });
}

function parseLine(line: string): { type?: unknown; __id?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as { type?: unknown; __id?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs systray2's native helper and shows `menu` once it reports ready. The protocol is systray2's:
 * JSON lines; the helper writes `{"type":"ready"}`, reads the menu, then writes
 * `{"type":"clicked","__id":n,…}` per click and reads `update-item` / `update-menu` / `exit` actions.
 * @throws TrayError `helper_unavailable` when the helper cannot start or exits before it is ready.
 */
export async function startTrayHelper(menu: TrayMenu, options: TrayHelperOptions): Promise<TrayHelper> {
  const child = spawn(options.file, [], { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP);
  });
  child.stdin.on('error', () => {
    // The helper exited; `exited` reports it.
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  try {
    await waitForReady(child, lines, options, () => stderr);
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    throw error;
  }
  return createTrayHelper(child, lines, exited, menu, options);
}

function createTrayHelper(
  child: ChildProcess,
  lines: Interface,
  exited: TrayHelper['exited'],
  menu: TrayMenu,
  options: TrayHelperOptions,
): TrayHelper {
  const write = (message: unknown) => {
    if (child.stdin?.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  let shown = wireMenu(menu, options.icons);
  write(shown);
  lines.on('line', (line) => {
    const message = parseLine(line);
    if (message?.type !== 'clicked' || typeof message.__id !== 'number') return;
    const key = TRAY_ITEM_KEYS[message.__id - 1];
    if (key) options.onClick(key);
  });
  let closing: Promise<void> | undefined;
  const onAbort = () => void helper.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const helper: TrayHelper = {
    pid: child.pid,
    exited,
    render(next) {
      const wanted = wireMenu(next, options.icons);
      if (wanted.icon !== shown.icon || wanted.tooltip !== shown.tooltip) write({ type: 'update-menu', menu: wanted });
      wanted.items.forEach((entry, index) => {
        if (JSON.stringify(entry) !== JSON.stringify(shown.items[index])) write({ type: 'update-item', item: entry, seq_id: -1 });
      });
      shown = wanted;
    },
    close() {
      closing ??= (async () => {
        options.signal?.removeEventListener('abort', onAbort);
        write({ type: 'exit' });
        child.stdin?.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(timer);
        lines.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => helper.close(),
  };
  return helper;
}
