import { CapabilityError } from '../../errors.js';
import { ffmpegHasDevice, requireFfmpeg, runMedia } from './ffmpeg.js';
import { MAX_MEDIA_BYTES } from './media.js';
import { pulseServerReachable, withSizeLimit, type MediaBackendContext } from './mediaContext.js';
import { downscaleRgb, drawCursor, fitWidth, pngScanlineBytes, x11ImageToRgb, x11ImageToScanlines } from './pixels.js';
import { encodePng, encodePngScanlinesSync, type RgbImage } from './png.js';
import { PULSE_AUDIO_INPUT, x11grabRecordArgs, type ScreenInfo } from './screenArgs.js';
import { SpareBuffer } from './spareBuffer.js';
import { connectX11, type X11Client, type X11Image } from './x11.js';
import type { CapturedImage, RecordRequest, SnapshotRequest } from './screenTypes.js';

export async function screensOf(client: X11Client, signal: AbortSignal): Promise<ScreenInfo[]> {
  const monitors = await client.getMonitors({ signal }).catch((error: unknown) => {
    if (client.closed) throw error;
    return undefined;
  });
  if (!monitors || monitors.length === 0) return [{ index: 0, name: 'screen', primary: true, x: 0, y: 0, width: client.screen.width, height: client.screen.height }];
  return monitors.map((monitor, index) => ({ index, ...monitor, name: monitor.name || `monitor-${index}` }));
}

/** The screen at `index`, or `invalid_arguments` naming how many there are (never another screen). */
export function pickScreen(screens: readonly ScreenInfo[], index: number): ScreenInfo {
  const screen = screens[index];
  if (!screen) throw new CapabilityError('invalid_arguments', `screenIndex ${index} does not exist: this display has ${screens.length} screen${screens.length === 1 ? '' : 's'} (0..${screens.length - 1}).`);
  return screen;
}

/** How long an idle cached X connection stays open. */
const IDLE_CLOSE_MS = 30_000;

interface CachedClient {
  readonly client: Promise<X11Client>;
  timer?: NodeJS.Timeout;
}

const clients = new Map<string, CachedClient>();

/**
 * A connection to `display`, kept for the next screenshot (setup and extension queries cost round
 * trips) and closed after {@link IDLE_CLOSE_MS} idle; it never keeps the process alive. `purpose`
 * keeps apart connections that must not share a stream (input is never queued behind a GetImage).
 */
export async function openCachedX11(display: string, ctx: Pick<MediaBackendContext, 'env' | 'signal'>, purpose = 'screen'): Promise<X11Client> {
  const key = `${purpose}\0${display}\0${ctx.env.XAUTHORITY ?? ''}`;
  let cached = clients.get(key);
  if (cached) {
    const client = await cached.client.catch(() => undefined);
    if (client && !client.closed) {
      touch(key, cached, client);
      return client;
    }
    if (clients.get(key) === cached) clients.delete(key);
  }
  const connecting = connectX11({ display, xauthority: ctx.env.XAUTHORITY, signal: ctx.signal });
  cached = { client: connecting };
  clients.set(key, cached);
  try {
    const client = await connecting;
    client.unref();
    touch(key, cached, client);
    return client;
  } catch (error) {
    if (clients.get(key) === cached) clients.delete(key);
    throw error;
  }
}

function touch(key: string, cached: CachedClient, client: X11Client): void {
  clearTimeout(cached.timer);
  cached.timer = setTimeout(() => {
    if (clients.get(key) === cached) clients.delete(key);
    void client.close();
  }, IDLE_CLOSE_MS);
  cached.timer.unref();
}

/** Closes every cached X connection (tests; a host that stops screenshots). */
export async function closeX11Connections(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(all.map(async (cached) => {
    clearTimeout(cached.timer);
    await (await cached.client.catch(() => undefined))?.close();
  }));
}

/** Linux/X11: the display's screens (RandR monitors, else the root window). */
export async function listX11Screens(display: string, ctx: MediaBackendContext): Promise<ScreenInfo[]> {
  return screensOf(await openCachedX11(display, ctx), ctx.signal);
}

/** JPEG from raw RGB through ffmpeg's mjpeg encoder; quality 0..1. */
export async function encodeJpegWithFfmpeg(image: RgbImage, quality: number, ctx: MediaBackendContext): Promise<Buffer> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  const q = Math.max(2, Math.min(31, Math.round(31 - quality * 29)));
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${image.width}x${image.height}`, '-i', 'pipe:0', '-frames:v', '1', '-q:v', String(q), '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1'];
  const result = await runMedia({ file: ffmpeg, args, env: ctx.env, input: image.data, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: MAX_MEDIA_BYTES + 1, what: 'the screenshot', shrinkHint: 'the media limit (26,148,864 bytes as base64); pass a smaller maxWidth or a lower quality' });
  return result.stdout;
}

/** GetImage replies and PNG scanlines of successive screenshots reuse one buffer each (see SpareBuffer). */
const spareReplies = new SpareBuffer(IDLE_CLOSE_MS);
const spareScanlines = new SpareBuffer(IDLE_CLOSE_MS);

/**
 * Largest screen captured, as bytes of its GetImage reply: 256 MiB, 64 million pixels (a 16K × 4K
 * screen). The size comes from the server and the reply buffer is made before the reply arrives.
 */
const MAX_CAPTURE_REPLY_BYTES = 256 * 1024 * 1024;

/** Bytes of a GetImage reply of `rect` at 32 bits per pixel, the largest pixel size a ZPixmap has. */
function getImageReplyBytes(rect: { width: number; height: number }): number {
  const bytes = 32 + rect.width * rect.height * 4;
  if (bytes > MAX_CAPTURE_REPLY_BYTES) {
    throw new CapabilityError('payload_too_large', `The screen is ${rect.width}×${rect.height}, more than capnode captures at once (${MAX_CAPTURE_REPLY_BYTES / 4 / 1024 / 1024} million pixels).`);
  }
  return bytes;
}

/**
 * A full-size PNG of `rect` by the shortest path: one GetImage, one pass from pixels to PNG
 * scanlines, one synchronous deflate at zlib level 1 (a few ms for a 1080p screen). Splitting the
 * work into bands or moving the deflate to the thread pool measured slower: each hop waits for
 * the scheduler when the machine is busy.
 */
export function fullSizePng(client: X11Client, rect: ScreenInfo, signal?: AbortSignal): Promise<Buffer> {
  return withImage(client, rect, signal, (image) => {
    const scanlines = spareScanlines.take(pngScanlineBytes(rect.width, rect.height));
    const png = encodePngScanlinesSync(rect.width, rect.height, x11ImageToScanlines(image, scanlines));
    spareScanlines.give(scanlines);
    return png;
  });
}

/**
 * GetImage of `rect` into the spare reply buffer, handed to `convert`, which must be synchronous and
 * keep nothing that views the image: the buffer goes to the next screenshot once it returns.
 */
async function withImage<T>(client: X11Client, rect: ScreenInfo, signal: AbortSignal | undefined, convert: (image: X11Image) => T): Promise<T> {
  const reply = spareReplies.take(getImageReplyBytes(rect));
  const result = convert(await client.getImage(rect, { signal, into: reply }));
  spareReplies.give(reply);
  return result;
}

/**
 * Linux/X11: GetImage of one screen over the display's socket, the pointer drawn in when asked
 * (XFIXES), downscaled in process, encoded as PNG (node:zlib) or JPEG (ffmpeg).
 */
export async function snapshotX11(display: string, request: SnapshotRequest, ctx: MediaBackendContext): Promise<CapturedImage> {
  const client = await openCachedX11(display, ctx);
  const screen = pickScreen(await screensOf(client, ctx.signal), request.screenIndex);
  const size = fitWidth(screen.width, screen.height, request.maxWidth);
  if (request.format === 'png' && !request.includePointer && size.width === screen.width) {
    // The common case: a full-size PNG, straight from the pixels to scanlines.
    return { data: await fullSizePng(client, screen, ctx.signal), width: screen.width, height: screen.height, source: screen };
  }
  let rgb: RgbImage = await withImage(client, screen, ctx.signal, x11ImageToRgb);
  if (request.includePointer) {
    const cursor = await client.getCursor({ signal: ctx.signal }).catch(() => undefined);
    if (cursor) drawCursor(rgb, cursor, screen.x, screen.y);
  }
  rgb = downscaleRgb(rgb, size.width, size.height);
  const data = request.format === 'png' ? await encodePng(rgb) : await encodeJpegWithFfmpeg(rgb, request.quality, ctx);
  return { data, width: rgb.width, height: rgb.height, source: screen };
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

