import { CapabilityError } from '../../errors.js';
import { ffmpegHasDevice, requireFfmpeg, runMedia } from './ffmpeg.js';
import { MAX_MEDIA_BYTES } from './media.js';
import { pulseServerReachable, type MediaBackendContext } from './mediaContext.js';
import { downscaleRgb, drawCursor, fitWidth, x11ImageToRgb, x11ImageToScanlines } from './pixels.js';
import { encodePng, encodePngScanlinesSync, type RgbImage } from './png.js';
import { PULSE_AUDIO_INPUT, x11grabRecordArgs, type ScreenInfo } from './screenArgs.js';
import { connectX11, type X11Client } from './x11.js';
import type { CapturedImage, RecordRequest, SnapshotRequest } from './screenTypes.js';

async function screensOf(client: X11Client): Promise<ScreenInfo[]> {
  const monitors = await client.getMonitors().catch(() => undefined);
  if (!monitors || monitors.length === 0) return [{ index: 0, name: 'screen', primary: true, x: 0, y: 0, width: client.screen.width, height: client.screen.height }];
  return monitors.map((monitor, index) => ({ index, ...monitor, name: monitor.name || `monitor-${index}` }));
}

/** The screen at `index`, or `invalid_arguments` naming how many there are (never another screen). */
export function pickScreen(screens: readonly ScreenInfo[], index: number): ScreenInfo {
  const screen = screens[index];
  if (!screen) throw new CapabilityError('invalid_arguments', `screenIndex ${index} does not exist: this display has ${screens.length} screen${screens.length === 1 ? '' : 's'} (0..${screens.length - 1}).`);
  return screen;
}

function open(display: string, ctx: MediaBackendContext): Promise<X11Client> {
  return connectX11({ display, xauthority: ctx.env.XAUTHORITY, signal: ctx.signal });
}

/** Linux/X11: the display's screens (RandR monitors, else the root window). */
export async function listX11Screens(display: string, ctx: MediaBackendContext): Promise<ScreenInfo[]> {
  const client = await open(display, ctx);
  try {
    return await screensOf(client);
  } finally {
    await client.close();
  }
}

/** JPEG from raw RGB through ffmpeg's mjpeg encoder; quality 0..1. */
export async function encodeJpegWithFfmpeg(image: RgbImage, quality: number, ctx: MediaBackendContext): Promise<Buffer> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  const q = Math.max(2, Math.min(31, Math.round(31 - quality * 29)));
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${image.width}x${image.height}`, '-i', 'pipe:0', '-frames:v', '1', '-q:v', String(q), '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1'];
  const result = await runMedia({ file: ffmpeg, args, env: ctx.env, input: image.data, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: MAX_MEDIA_BYTES + 1, what: 'the JPEG encoder' });
  return result.stdout;
}

/**
 * A full-size PNG of `rect` by the shortest path: one GetImage, one pass from pixels to PNG
 * scanlines, one synchronous deflate at zlib level 1 (a few ms for a 1080p screen). Splitting the
 * work into bands or moving the deflate to the thread pool measured slower: each hop waits for
 * the scheduler when the machine is busy.
 */
export async function fullSizePng(client: X11Client, rect: ScreenInfo): Promise<Buffer> {
  const image = await client.getImage(rect);
  return encodePngScanlinesSync(rect.width, rect.height, x11ImageToScanlines(image));
}

/**
 * Linux/X11: GetImage of one screen over the display's socket, the pointer drawn in when asked
 * (XFIXES), downscaled in process, encoded as PNG (node:zlib) or JPEG (ffmpeg).
 */
export async function snapshotX11(display: string, request: SnapshotRequest, ctx: MediaBackendContext): Promise<CapturedImage> {
  let rgb: RgbImage;
  const client = await open(display, ctx);
  try {
    const screen = pickScreen(await screensOf(client), request.screenIndex);
    const size = fitWidth(screen.width, screen.height, request.maxWidth);
    if (request.format === 'png' && !request.includePointer && size.width === screen.width) {
      // The common case: a full-size PNG, straight from the pixels to scanlines.
      return { data: await fullSizePng(client, screen), width: screen.width, height: screen.height };
    }
    rgb = x11ImageToRgb(await client.getImage(screen));
    if (request.includePointer) {
      const cursor = await client.getCursor().catch(() => undefined);
      if (cursor) drawCursor(rgb, cursor, screen.x, screen.y);
    }
    rgb = downscaleRgb(rgb, size.width, size.height);
  } finally {
    // Encoding need not wait for the X server to hang up.
    void client.close();
  }
  const data = request.format === 'png' ? await encodePng(rgb) : await encodeJpegWithFfmpeg(rgb, request.quality, ctx);
  return { data, width: rgb.width, height: rgb.height };
}

/** Linux/X11: ffmpeg x11grab of one screen into an mp4, with pulse audio when asked and reachable. */
export async function recordX11(display: string, request: RecordRequest, output: string, ctx: MediaBackendContext): Promise<{ hasAudio: boolean }> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  if (!(await ffmpegHasDevice(ffmpeg, 'x11grab', ctx.env, ctx.signal))) throw new CapabilityError('unavailable', 'unavailable here: install an ffmpeg built with x11grab (Debian: ffmpeg).');
  const screen = pickScreen(await listX11Screens(display, ctx), request.screenIndex);
  let audio: readonly string[] | undefined;
  if (request.includeAudio) {
    if (pulseServerReachable(ctx.env) && (await ffmpegHasDevice(ffmpeg, 'pulse', ctx.env, ctx.signal))) audio = PULSE_AUDIO_INPUT;
    else ctx.log('warning', 'screen.record: no PulseAudio server reachable; recording without audio.');
  }
  const args = x11grabRecordArgs(display, screen, { fps: request.fps, durationMs: request.durationMs, output, audio, drawPointer: request.includePointer });
  await runMedia({ file: ffmpeg, args: withSizeLimit(args), env: ctx.env, signal: ctx.signal, timeoutMs: request.durationMs + 60_000, maxOutputBytes: 1 << 20, what: 'the screen recording' });
  return { hasAudio: audio !== undefined };
}

/** Puts ffmpeg's `-fs` (stop writing past the media limit) before the output file, the last argument. */
export function withSizeLimit(args: readonly string[]): string[] {
  return [...args.slice(0, -1), '-fs', String(MAX_MEDIA_BYTES + 1), args[args.length - 1]!];
}
