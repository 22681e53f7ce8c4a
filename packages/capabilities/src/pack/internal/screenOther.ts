import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CapabilityError } from '../../errors.js';
import { findExecutable } from '../../internal/which.js';
import { requireFfmpeg, runMedia } from './ffmpeg.js';
import { withSizeLimit, type MediaBackendContext } from './mediaContext.js';
import { jpegSize, pngSize } from './png.js';
import {
  WINDOWS_LIST_SCRIPT,
  WINDOWS_SNAPSHOT_SCRIPT,
  avfoundationRecordArgs,
  gdigrabRecordArgs,
  parseAvfoundationDevices,
  parseDshowDevices,
  parseMacDisplays,
  parseWindowsScreens,
  powershellArgs,
  screencaptureArgs,
  sipsArgs,
  windowsSnapshotEnv,
  type ScreenInfo,
} from './screenArgs.js';
import { pickScreen } from './screenLinux.js';
import type { CapturedImage, RecordRequest, SnapshotRequest } from './screenTypes.js';

async function need(program: string, ctx: MediaBackendContext, hint: string): Promise<string> {
  const file = await findExecutable(program, { env: ctx.env });
  if (!file) throw new CapabilityError('unavailable', `unavailable here: install ${hint}.`);
  return file;
}

function sizeOf(data: Buffer): { width: number; height: number } {
  const size = pngSize(data) ?? jpegSize(data);
  if (!size) throw new CapabilityError('failed', 'The screenshot program wrote no PNG or JPEG image.');
  return size;
}

/** macOS: screens from `system_profiler SPDisplaysDataType -json`. */
export async function listMacScreens(ctx: MediaBackendContext): Promise<ScreenInfo[]> {
  const profiler = await need('system_profiler', ctx, 'system_profiler (/usr/sbin, part of macOS)');
  const result = await runMedia({ file: profiler, args: ['SPDisplaysDataType', '-json'], env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 4 << 20, what: 'the display listing' });
  return parseMacDisplays(result.stdout.toString('utf8'));
}

/** macOS: `screencapture` to a file, then `sips` for maxWidth and JPEG quality. */
export async function snapshotMac(request: SnapshotRequest, dir: string, ctx: MediaBackendContext): Promise<CapturedImage> {
  const screencapture = await need('screencapture', ctx, 'screencapture (/usr/sbin, part of macOS); grant Screen Recording permission to the host');
  const file = join(dir, request.format === 'png' ? 'screen.png' : 'screen.jpg');
  await runMedia({ file: screencapture, args: screencaptureArgs({ index: request.screenIndex, format: request.format, includePointer: request.includePointer, file }), env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the screenshot' });
  let data = await readFile(file).catch(() => {
    throw new CapabilityError('invalid_arguments', `screenIndex ${request.screenIndex} does not exist, or Screen Recording permission is missing.`);
  });
  const size = sizeOf(data);
  const width = request.maxWidth !== undefined && size.width > request.maxWidth ? request.maxWidth : undefined;
  const jpegQuality = request.format === 'jpeg' ? Math.round(request.quality * 100) : undefined;
  if (width !== undefined || jpegQuality !== undefined) {
    const sips = await need('sips', ctx, 'sips (/usr/bin, part of macOS)');
    await runMedia({ file: sips, args: sipsArgs({ file, width, jpegQuality }), env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the image resize' });
    data = await readFile(file);
  }
  return { data, ...sizeOf(data) };
}

/** macOS: ffmpeg avfoundation recording of "Capture screen N" (+ the first audio device). */
export async function recordMac(request: RecordRequest, output: string, ctx: MediaBackendContext): Promise<{ hasAudio: boolean }> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  const listing = await runMedia({ file: ffmpeg, args: ['-hide_banner', '-f', 'avfoundation', '-list_devices', 'true', '-i', ''], env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the device listing', ignoreExitCode: true }).then((result) => result.stderr);
  const devices = parseAvfoundationDevices(listing);
  const screen = devices.video.find((device) => device.name === `Capture screen ${request.screenIndex}`);
  if (!screen) throw new CapabilityError('invalid_arguments', `screenIndex ${request.screenIndex} does not exist (or Screen Recording permission is missing).`);
  const audioDevice = request.includeAudio ? devices.audio[0]?.index : undefined;
  const args = avfoundationRecordArgs(screen.index, { fps: request.fps, durationMs: request.durationMs, output, audioDevice, drawPointer: request.includePointer });
  await runMedia({ file: ffmpeg, args: withSizeLimit(args), env: ctx.env, signal: ctx.signal, timeoutMs: request.durationMs + 60_000, maxOutputBytes: 1 << 20, what: 'the screen recording' });
  return { hasAudio: audioDevice !== undefined };
}

async function powershell(ctx: MediaBackendContext): Promise<string> {
  return (await findExecutable('powershell', { env: ctx.env })) ?? (await need('pwsh', ctx, 'Windows PowerShell (powershell.exe) on PATH'));
}

/** Windows: screens from System.Windows.Forms. */
export async function listWindowsScreens(ctx: MediaBackendContext): Promise<ScreenInfo[]> {
  const result = await runMedia({ file: await powershell(ctx), args: powershellArgs(WINDOWS_LIST_SCRIPT), env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the screen listing' });
  return parseWindowsScreens(result.stdout.toString('utf8'));
}

/** Windows: System.Drawing (GDI CopyFromScreen) to a file, scaled and encoded by .NET. */
export async function snapshotWindows(request: SnapshotRequest, dir: string, ctx: MediaBackendContext): Promise<CapturedImage> {
  const file = join(dir, request.format === 'png' ? 'screen.png' : 'screen.jpg');
  const env = { ...ctx.env, ...windowsSnapshotEnv({ index: request.screenIndex, format: request.format, quality: request.quality, maxWidth: request.maxWidth, includePointer: request.includePointer, file }) };
  await runMedia({ file: await powershell(ctx), args: powershellArgs(WINDOWS_SNAPSHOT_SCRIPT), env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the screenshot' }).catch((error: unknown) => {
    if (error instanceof CapabilityError && /out of range/.test(error.message)) throw new CapabilityError('invalid_arguments', `screenIndex ${request.screenIndex} does not exist.`);
    throw error;
  });
  const data = await readFile(file);
  return { data, ...sizeOf(data) };
}

/** Windows: ffmpeg gdigrab of one screen's rectangle (+ the first DirectShow audio device). */
export async function recordWindows(request: RecordRequest, output: string, ctx: MediaBackendContext): Promise<{ hasAudio: boolean }> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  const screen = pickScreen(await listWindowsScreens(ctx), request.screenIndex);
  let audioDevice: string | undefined;
  if (request.includeAudio) {
    const listing = await runMedia({ file: ffmpeg, args: ['-hide_banner', '-list_devices', 'true', '-f', 'dshow', '-i', 'dummy'], env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the device listing', ignoreExitCode: true }).then((result) => result.stderr);
    audioDevice = parseDshowDevices(listing).find((device) => device.kind === 'audio')?.name;
  }
  const args = gdigrabRecordArgs(screen, { fps: request.fps, durationMs: request.durationMs, output, audioDevice, drawPointer: request.includePointer });
  await runMedia({ file: ffmpeg, args: withSizeLimit(args), env: ctx.env, signal: ctx.signal, timeoutMs: request.durationMs + 60_000, maxOutputBytes: 1 << 20, what: 'the screen recording' });
  return { hasAudio: audioDevice !== undefined };
}

