import { spawn } from 'node:child_process';
import { formatApprovalSummary, type PendingApproval } from '@capnode/capabilities';
import { escapeForDisplay } from '@capnode/capabilities/display';
import { findExecutable, showDesktopNotification } from '@capnode/capabilities/node';
import { openBrowser } from '@capnode/host/setup';
import { TrayError } from './errors.js';

/** Where desktop tools are looked up (PATH) and run with (DISPLAY, WAYLAND_DISPLAY). */
export interface DesktopOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  readonly signal?: AbortSignal;
}

const TOOL_TIMEOUT_MS = 10_000;

interface ToolResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a tool without a shell, feeding `input` on stdin. Settles on `exit`, not on the pipes
 * closing: xclip forks a child that keeps serving the selection (and holds the pipes).
 */
function runTool(file: string, args: readonly string[], options: DesktopOptions & { input?: string; timeoutMs?: number }): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, ...(options.signal ? { signal: options.signal } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout = (stdout + chunk).slice(-4096)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
    const timeoutMs = options.timeoutMs ?? TOOL_TIMEOUT_MS;
    const timer = timeoutMs > 0 ? setTimeout(() => child.kill('SIGKILL'), timeoutMs) : undefined;
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new TrayError('failed', `${file} could not run: ${error.message}`, { cause: error }));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {
      // The tool exited without reading its input; its exit code says why.
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The clipboard tool of this platform: `[file, args]`, or the install hint when there is none. */
async function clipboardTool(options: DesktopOptions): Promise<{ file: string; args: string[] } | string> {
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const find = (name: string) => findExecutable(name, { env, platform });
  if (platform === 'darwin') {
    const file = await find('pbcopy');
    return file ? { file, args: [] } : 'pbcopy (/usr/bin/pbcopy) must be on PATH';
  }
  if (platform === 'win32') {
    const file = await find('clip');
    return file ? { file, args: [] } : 'clip.exe must be on PATH';
  }
  const wayland = env.WAYLAND_DISPLAY ? await find('wl-copy') : undefined;
  if (wayland) return { file: wayland, args: [] };
  const xclip = await find('xclip');
  if (xclip) return { file: xclip, args: ['-selection', 'clipboard', '-in'] };
  const xsel = await find('xsel');
  if (xsel) return { file: xsel, args: ['--clipboard', '--input'] };
  return 'install xclip (Debian/Ubuntu: apt install xclip), or wl-clipboard on Wayland';
}

/**
 * Puts `text` on the clipboard with the platform's tool (xclip / xsel / wl-copy, pbcopy, clip.exe),
 * passed on stdin, never as an argument (a token must not show in the process list).
 * @throws TrayError `unsupported` (no tool; the message says what to install), `failed`.
 */
export async function writeClipboard(text: string, options: DesktopOptions = {}): Promise<void> {
  const tool = await clipboardTool(options);
  if (typeof tool === 'string') throw new TrayError('unsupported', `cannot copy: ${tool}`);
  const result = await runTool(tool.file, tool.args, { ...options, input: text });
  if (result.code !== 0) throw new TrayError('failed', `${tool.file} could not copy (${result.stderr.trim().split('\n')[0] || `exit code ${result.code}`})`);
}

/** What to install when the platform's browser opener is missing. */
function openerHint(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'open (/usr/bin/open) must be on PATH';
  if (platform === 'win32') return 'rundll32.exe must be on PATH';
  return 'install xdg-utils (Debian/Ubuntu: apt install xdg-utils)';
}

/**
 * Opens `url` in the default browser with the host's opener (`$BROWSER`, else xdg-open, open, the
 * Windows URL protocol handler; see `openBrowser` of `@capnode/host/setup`). Only http(s) URLs:
 * the tray opens its dashboard, nothing an opener could read as a file or a command.
 * @throws TrayError `unsupported` (no opener; the message says what to install and carries the
 * URL with its one-time code masked), `failed` (the opener exited with an error at once).
 */
export async function openInBrowser(url: string, options: DesktopOptions = {}): Promise<void> {
  if (!/^https?:\/\//.test(url)) throw new TrayError('failed', `refusing to open '${url}': not an http(s) URL`);
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const result = await openBrowser(url, { env, platform, ...(options.signal ? { signal: options.signal } : {}) });
  if (result.opened) return;
  if (result.reason === 'not_started') {
    const hint = env.BROWSER ? `$BROWSER (${result.command}) could not start: ${result.detail}` : openerHint(platform);
    throw new TrayError('unsupported', `cannot open the browser: ${hint}; open ${url.replace(/code=[^&#]+/, 'code=…')} yourself`);
  }
  throw new TrayError('failed', `${result.command} could not open the browser (${result.detail})`);
}

/** Title and body of the tray's notification for a pending approval (escaped like every rendering). */
export function approvalNotificationText(approval: PendingApproval): { readonly title: string; readonly body: string } {
  return { title: `capnode: approval needed (${escapeForDisplay(approval.command)})`, body: formatApprovalSummary(approval).join('\n') };
}

/** `&`, `<`, `>` as entities: notification daemons read the body as markup. */
function escapeMarkup(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Shows a notification for a pending approval. On Linux it carries an "Open approvals" action
 * (notify-send --action, which waits for the answer) and resolves `'open'` when the person clicks
 * it; elsewhere, or when the action is not supported, a plain notification (`'shown'`).
 * @throws the CapabilityError of `showDesktopNotification` (`unsupported` without a notifier).
 */
export async function notifyApproval(approval: PendingApproval, options: DesktopOptions = {}): Promise<'open' | 'shown'> {
  const { title, body } = approvalNotificationText(approval);
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const notifySend = platform === 'linux' ? await findExecutable('notify-send', { env, platform }) : undefined;
  if (notifySend) {
    const seconds = Math.max(1, Math.ceil((approval.expiresAt - Date.now()) / 1000));
    const args = ['--app-name', 'capnode', '--urgency', 'critical', '--expire-time', String(seconds * 1000), '--action', 'open=Open approvals', '--', title, escapeMarkup(body)];
    // Waits while the notification is up (at most until the approval expires).
    const result = await runTool(notifySend, args, { ...options, timeoutMs: (seconds + 5) * 1000 });
    if (result.code === 0) return result.stdout.trim() === 'open' ? 'open' : 'shown';
    // Killed at the approval's expiry: it was shown, nobody chose the action.
    if (result.code === null) return 'shown';
    // An older notify-send without --action, or no daemon: fall through to the plain notification.
  }
  await showDesktopNotification({ title, body, urgency: 'critical', env, ...(options.signal ? { signal: options.signal } : {}) });
  return 'shown';
}
