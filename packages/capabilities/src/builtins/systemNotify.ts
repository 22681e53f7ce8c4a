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

/**
 * Title, body, sound and scenario reach the script through the environment, so they are never parsed
 * as code (each is XML-escaped before it enters the toast).
 */
const TOAST_SCRIPT = `$ErrorActionPreference = 'Stop'
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] > $null
$title = [System.Security.SecurityElement]::Escape($env:CAPNODE_NOTIFY_TITLE)
$body = [System.Security.SecurityElement]::Escape($env:CAPNODE_NOTIFY_BODY)
$audio = if ($env:CAPNODE_NOTIFY_SOUND -eq 'silent') { '<audio silent="true"/>' } elseif ($env:CAPNODE_NOTIFY_SOUND) { '<audio src="' + [System.Security.SecurityElement]::Escape($env:CAPNODE_NOTIFY_SOUND) + '"/>' } else { '' }
$scenario = if ($env:CAPNODE_NOTIFY_SCENARIO) { ' scenario="' + [System.Security.SecurityElement]::Escape($env:CAPNODE_NOTIFY_SCENARIO) + '"' } else { '' }
$xml = New-Object Windows.Data.Xml.Dom.XmlDocument
$xml.LoadXml("<toast$scenario><visual><binding template=""ToastGeneric""><text>$title</text><text>$body</text></binding></visual>$audio</toast>")
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($env:CAPNODE_NOTIFY_APP_ID).Show([Windows.UI.Notifications.ToastNotification]::new($xml))
`;

/** AppleScript reading title and body (and a sound name) from its arguments (negative indexes work whether or not `--` is passed on). */
const APPLESCRIPT = ['on run argv', 'display notification (item -1 of argv) with title (item -2 of argv)', 'end run'];
const APPLESCRIPT_WITH_SOUND = ['on run argv', 'display notification (item -1 of argv) with title (item -2 of argv) sound name (item -3 of argv)', 'end run'];

/** `&`, `<` and `>` as entities, so a notification body is text, not markup. */
function escapeMarkup(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** OpenClaw's notification priority. */
export type NotificationPriority = 'passive' | 'active' | 'timeSensitive';

/** notify-send urgency for an OpenClaw priority: passive → low, active → normal, timeSensitive → critical. */
export function urgencyForPriority(priority: NotificationPriority): 'low' | 'normal' | 'critical' {
  return priority === 'passive' ? 'low' : priority === 'timeSensitive' ? 'critical' : 'normal';
}

/** What a notification says and how it sounds, independent of platform. */
export interface NotificationSpec {
  readonly title: string;
  readonly body: string;
  readonly urgency: 'low' | 'normal' | 'critical';
  /** A sound name, `true` for the platform's default sound, `false` for silence; absent: the platform decides. */
  readonly sound?: string | boolean;
}

/** A sound name as each platform spells it: freedesktop theme names (Linux), `Glass` (macOS), `Default`/`IM`/`Mail`… (Windows). */
const SOUND_NAME = /^[A-Za-z0-9 ._-]{1,64}$/;

/** The notifier's arguments (and environment) for `platform`; pure, for tests of every platform. */
export function desktopNotificationArgs(platform: NodeJS.Platform, spec: NotificationSpec): { readonly args: string[]; readonly env?: Record<string, string> } {
  const sound = typeof spec.sound === 'string' && SOUND_NAME.test(spec.sound) ? spec.sound : spec.sound === undefined ? undefined : spec.sound === false ? false : true;
  if (platform === 'win32') {
    const encoded = Buffer.from(TOAST_SCRIPT, 'utf16le').toString('base64');
    const env: Record<string, string> = { CAPNODE_NOTIFY_TITLE: spec.title, CAPNODE_NOTIFY_BODY: spec.body, CAPNODE_NOTIFY_APP_ID: POWERSHELL_APP_ID };
    if (sound === false || (sound === undefined && spec.urgency === 'low')) env.CAPNODE_NOTIFY_SOUND = 'silent';
    else if (typeof sound === 'string') env.CAPNODE_NOTIFY_SOUND = `ms-winsoundevent:Notification.${sound.replace(/[^A-Za-z0-9.]/g, '')}`;
    else if (sound === true) env.CAPNODE_NOTIFY_SOUND = 'ms-winsoundevent:Notification.Default';
    if (spec.urgency === 'critical') env.CAPNODE_NOTIFY_SCENARIO = 'urgent';
    return { args: ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand', encoded], env };
  }
  if (platform === 'darwin') {
    if (sound === undefined || sound === false) return { args: [...APPLESCRIPT.flatMap((line) => ['-e', line]), '--', spec.title, spec.body] };
    return { args: [...APPLESCRIPT_WITH_SOUND.flatMap((line) => ['-e', line]), '--', sound === true ? 'default' : sound, spec.title, spec.body] };
  }
  const hints: string[] = [];
  if (typeof sound === 'string') hints.push(`--hint=string:sound-name:${sound}`);
  else if (sound === true) hints.push('--hint=string:sound-name:message-new-instant');
  else if (sound === false) hints.push('--hint=boolean:suppress-sound:true');
  // Notification daemons render the body as markup (`<span size="1">` hides text): escape it so it shows as written.
  return { args: ['--urgency', spec.urgency, '--app-name', 'capnode', ...hints, '--', spec.title, ...(spec.body ? [escapeMarkup(spec.body)] : [])] };
}

interface Notifier {
  readonly tool: string;
  readonly file: string;
  readonly args: readonly string[];
  readonly env?: Record<string, string>;
}

/** The platform's notifier program on `env`'s PATH (a lookup only, also the availability probe). */
async function findNotifierProgram(env: NodeJS.ProcessEnv): Promise<{ readonly tool: string; readonly file: string } | undefined> {
  const platform = process.platform;
  const file =
    platform === 'win32'
      ? ((await findExecutable('powershell', { env })) ?? (await findExecutable('pwsh', { env })))
      : await findExecutable(platform === 'darwin' ? 'osascript' : 'notify-send', { env });
  if (!file) return undefined;
  return { tool: platform === 'win32' ? 'PowerShell' : platform === 'darwin' ? 'osascript' : 'notify-send', file };
}

async function findNotifier(spec: NotificationSpec, env: NodeJS.ProcessEnv): Promise<Notifier | undefined> {
  const program = await findNotifierProgram(env);
  return program && { ...program, ...desktopNotificationArgs(process.platform, spec) };
}

/** What to install for notifications on this platform (the availability probe's hint and the `unsupported` message). */
function notifierInstall(): string {
  if (process.platform === 'win32') return 'Windows PowerShell (powershell.exe) on PATH';
  if (process.platform === 'darwin') return 'osascript (part of macOS, /usr/bin/osascript) on PATH';
  return 'notify-send (Debian/Ubuntu: libnotify-bin, Fedora: libnotify) and a notification daemon';
}

export interface DesktopNotificationOptions {
  readonly title: string;
  readonly body?: string;
  readonly urgency?: 'low' | 'normal' | 'critical';
  /** A sound name, `true` for the default sound, `false` for silence; absent: the platform decides. */
  readonly sound?: string | boolean;
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
  const spec: NotificationSpec = { title: options.title, body, urgency: options.urgency ?? 'normal', ...(options.sound !== undefined ? { sound: options.sound } : {}) };
  const notifier = await findNotifier(spec, env);
  if (!notifier) throw new CapabilityError('unsupported', `system.notify is unsupported here: install ${notifierInstall()}.`);
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
 * PowerShell toast (Windows) (see {@link showDesktopNotification}), with OpenClaw's fields: `priority`
 * (passive → low urgency, active → normal, timeSensitive → critical; a toast's `urgent` scenario),
 * `sound` (a sound-name hint, a macOS sound name, a toast audio event; `false` silences) and `delivery`
 * (`system` only: `overlay` and `auto` show a system notification). Result `{ ok: true }` (plus how it
 * was shown). Fails `unsupported` when no notifier exists.
 */
export function createSystemNotifyCommand(options: BuiltinOptions = {}): CommandDefinition {
  return defineCommand({
    name: 'system.notify',
    description: 'Shows a desktop notification to the user of this machine.',
    annotations: { title: 'Notify the user', readOnly: false, destructive: false },
    input: z.object({
      title: z.string().min(1).max(256),
      body: z.string().max(4096).default(''),
      priority: z.enum(['passive', 'active', 'timeSensitive']).optional().describe('OpenClaw priority; sets the urgency (passive: low, active: normal, timeSensitive: critical).'),
      sound: z
        .union([z.boolean(), z.string().regex(SOUND_NAME, 'a sound name: letters, digits, space . _ -')])
        .optional()
        .describe('A sound name (freedesktop theme name, macOS sound such as Glass, Windows Default/IM/Mail/Reminder/SMS), true for the default sound, false for none.'),
      delivery: z.enum(['system', 'overlay', 'auto']).default('system').describe('Only system notifications exist here; overlay and auto show one too.'),
      urgency: z.enum(['low', 'normal', 'critical']).optional().describe('Linux urgency (priority wins when both are given).'),
    }),
    availability: async () => {
      const env = options.env ?? process.env;
      return (await findNotifierProgram(env)) ? { available: true } : { available: false, install: notifierInstall() };
    },
    async execute({ title, body, priority, sound, urgency }, ctx) {
      const effective = priority ? urgencyForPriority(priority) : (urgency ?? 'normal');
      const shown = await showDesktopNotification({ title, body, urgency: effective, ...(sound !== undefined ? { sound } : {}), env: options.env ?? process.env, signal: ctx.signal });
      return json({ ok: true, shown: true, via: shown.via, delivery: 'system', urgency: effective });
    },
  });
}
