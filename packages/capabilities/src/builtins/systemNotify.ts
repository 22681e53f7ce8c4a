import { Buffer } from 'node:buffer';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCommand, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { runProcess } from '../internal/runProcess.js';
import { findExecutable } from '../internal/which.js';
import type { BuiltinOptions } from './options.js';

const NOTIFY_TIMEOUT_MS = 15_000;
const NOTIFY_OUTPUT_BYTES = 16 * 1024;
/** PowerShell's own AppUserModelID: toasts from an unregistered id are dropped silently. */
const POWERSHELL_APP_ID = '{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe';

/** Title and body reach the script through the environment, so they are never parsed as code. */
const TOAST_SCRIPT = `$ErrorActionPreference = 'Stop'
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] > $null
$title = [System.Security.SecurityElement]::Escape($env:CAPNODE_NOTIFY_TITLE)
$body = [System.Security.SecurityElement]::Escape($env:CAPNODE_NOTIFY_BODY)
$xml = New-Object Windows.Data.Xml.Dom.XmlDocument
$xml.LoadXml("<toast><visual><binding template=""ToastGeneric""><text>$title</text><text>$body</text></binding></visual></toast>")
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($env:CAPNODE_NOTIFY_APP_ID).Show([Windows.UI.Notifications.ToastNotification]::new($xml))
`;

/** AppleScript reading title and body from its arguments (negative indexes work whether or not `--` is passed on). */
const APPLESCRIPT = ['on run argv', 'display notification (item -1 of argv) with title (item -2 of argv)', 'end run'];

/** `&`, `<` and `>` as entities, so a notification body is text, not markup. */
function escapeMarkup(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface Notifier {
  readonly tool: string;
  readonly file: string;
  readonly args: readonly string[];
  readonly env?: Record<string, string>;
}

async function findNotifier(title: string, body: string, urgency: string, env: NodeJS.ProcessEnv): Promise<Notifier | undefined> {
  if (process.platform === 'win32') {
    const file = (await findExecutable('powershell', { env })) ?? (await findExecutable('pwsh', { env }));
    if (!file) return undefined;
    const encoded = Buffer.from(TOAST_SCRIPT, 'utf16le').toString('base64');
    return {
      tool: 'PowerShell',
      file,
      args: ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand', encoded],
      env: { CAPNODE_NOTIFY_TITLE: title, CAPNODE_NOTIFY_BODY: body, CAPNODE_NOTIFY_APP_ID: POWERSHELL_APP_ID },
    };
  }
  if (process.platform === 'darwin') {
    const file = await findExecutable('osascript', { env });
    if (!file) return undefined;
    return { tool: 'osascript', file, args: [...APPLESCRIPT.flatMap((line) => ['-e', line]), '--', title, body] };
  }
  const file = await findExecutable('notify-send', { env });
  if (!file) return undefined;
  // Notification daemons render the body as markup (`<span size="1">` hides text): escape it so it shows as written.
  return { tool: 'notify-send', file, args: ['--urgency', urgency, '--app-name', 'capnode', '--', title, ...(body ? [escapeMarkup(body)] : [])] };
}

function installHint(): string {
  if (process.platform === 'win32') return 'Windows PowerShell (powershell.exe) must be on PATH';
  if (process.platform === 'darwin') return 'osascript (/usr/bin/osascript) must be on PATH';
  return 'install notify-send (Debian/Ubuntu: libnotify-bin, Fedora: libnotify) and run a notification daemon';
}

export interface DesktopNotificationOptions {
  readonly title: string;
  readonly body?: string;
  readonly urgency?: 'low' | 'normal' | 'critical';
  /** Environment the notifier is looked up in and runs with (PATH). Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

/**
 * Shows a desktop notification through notify-send (Linux), osascript (macOS) or a PowerShell toast
 * (Windows), with title and body passed as arguments or environment variables, never through a
 * shell. Resolves with the tool that showed it.
 *
 * @throws CapabilityError `unsupported` when no notifier exists, `failed` when it failed, `cancelled`.
 */
export async function showDesktopNotification(options: DesktopNotificationOptions): Promise<{ readonly via: string }> {
  const env = options.env ?? process.env;
  const body = options.body ?? '';
  const notifier = await findNotifier(options.title, body, options.urgency ?? 'normal', env);
  if (!notifier) throw new CapabilityError('unsupported', `system.notify is unsupported here: ${installHint()}.`);
  const result = await runProcess({
    file: notifier.file,
    args: notifier.args,
    cwd: process.cwd(),
    env: { ...env, ...notifier.env },
    timeoutMs: NOTIFY_TIMEOUT_MS,
    maxOutputBytes: NOTIFY_OUTPUT_BYTES,
    signal: options.signal ?? new AbortController().signal,
  });
  if (result.cancelled) throw new CapabilityError('cancelled', 'system.notify was cancelled.');
  if (result.timedOut) throw new CapabilityError('failed', `${notifier.tool} did not finish within ${NOTIFY_TIMEOUT_MS / 1000} s.`);
  if (result.exitCode !== 0) {
    const detail = result.stderr.trim().split('\n')[0]?.slice(0, 300) || `exit code ${result.exitCode ?? result.signal}`;
    throw new CapabilityError('failed', `${notifier.tool} could not show the notification: ${detail}`);
  }
  return { via: notifier.tool };
}

/**
 * `system.notify`: shows a desktop notification through notify-send (Linux), osascript (macOS) or a
 * PowerShell toast (Windows) (see {@link showDesktopNotification}). Fails `unsupported` when no notifier exists.
 */
export function createSystemNotifyCommand(options: BuiltinOptions = {}): CommandDefinition {
  return defineCommand({
    name: 'system.notify',
    description: 'Shows a desktop notification to the user of this machine.',
    annotations: { title: 'Notify the user', readOnly: false, destructive: false },
    input: z.object({
      title: z.string().min(1).max(256),
      body: z.string().max(4096).default(''),
      urgency: z.enum(['low', 'normal', 'critical']).default('normal').describe('Linux only; ignored elsewhere.'),
    }),
    async execute({ title, body, urgency }, ctx) {
      const shown = await showDesktopNotification({ title, body, urgency, env: options.env ?? process.env, signal: ctx.signal });
      return json({ shown: true, via: shown.via });
    },
  });
}
