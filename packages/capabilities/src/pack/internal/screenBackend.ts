import { join } from 'node:path';
import { CapabilityError } from '../../errors.js';
import { readRecording, withTempDir, type MediaBackendContext } from './mediaContext.js';
import type { ScreenInfo } from './screenArgs.js';
import { listX11Screens, recordX11, snapshotX11 } from './screenLinux.js';
import { listMacScreens, listWindowsScreens, recordMac, recordWindows, snapshotMac, snapshotWindows } from './screenOther.js';
import type { CapturedImage, RecordRequest, SnapshotRequest } from './screenTypes.js';

/**
 * The screen backends behind one door, loaded only when a screen command runs (dynamic import),
 * so a host that never takes a screenshot never loads them.
 */
export interface ScreenBackendContext extends MediaBackendContext {
  /** The X display (Linux and other X11 systems). */
  readonly display: string | undefined;
}

function x11Display(ctx: ScreenBackendContext): string {
  if (!ctx.display) throw new CapabilityError('unavailable', 'unavailable here: no X11 display (set DISPLAY; Wayland-only sessions need XWayland).');
  return ctx.display;
}

export async function listScreens(ctx: ScreenBackendContext): Promise<ScreenInfo[]> {
  if (ctx.platform === 'darwin') return listMacScreens(ctx);
  if (ctx.platform === 'win32') return listWindowsScreens(ctx);
  return listX11Screens(x11Display(ctx), ctx);
}

export async function takeSnapshot(request: SnapshotRequest, ctx: ScreenBackendContext): Promise<CapturedImage> {
  if (ctx.platform === 'darwin') return withTempDir((dir) => snapshotMac(request, dir, ctx));
  if (ctx.platform === 'win32') return withTempDir((dir) => snapshotWindows(request, dir, ctx));
  return snapshotX11(x11Display(ctx), request, ctx);
}

/** Records to a temporary mp4 and returns its bytes; the file is removed whatever happens. */
export async function recordScreen(request: RecordRequest, ctx: ScreenBackendContext): Promise<{ data: Buffer; hasAudio: boolean }> {
  return withTempDir(async (dir) => {
    const output = join(dir, 'screen.mp4');
    const recorded =
      ctx.platform === 'darwin' ? await recordMac(request, output, ctx) : ctx.platform === 'win32' ? await recordWindows(request, output, ctx) : await recordX11(x11Display(ctx), request, output, ctx);
    return { data: await readRecording(output, 'The recording', 'record a shorter durationMs, a lower fps, or without audio'), hasAudio: recorded.hasAudio };
  });
}
