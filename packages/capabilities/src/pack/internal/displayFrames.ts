import { randomBytes } from 'node:crypto';
import { CapabilityError } from '../../errors.js';

/** A rectangle of the desktop in the input backend's coordinates (X11 root pixels). */
export interface FrameRect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** What `screen.snapshot` delivered: the picture's size, the screen it shows, who asked. */
export interface DisplayFrame {
  readonly id: string;
  /** OpenClaw's `executionId`, or `''` for callers that send none. */
  readonly scope: string;
  readonly screenIndex: number;
  /** Size of the delivered picture: coordinates of `computer.act` are pixels of it. */
  readonly width: number;
  readonly height: number;
  /** The `maxWidth` the snapshot was asked for (OpenClaw's agent echoes it as `refWidth`). */
  readonly requestedWidth: number | undefined;
  /** Where the screen was when captured, when the backend knows it (X11); a change makes the frame stale. */
  readonly source: FrameRect | undefined;
}

/** A point of a frame as a fraction of its screen (0 ≤ f < 1), what every input backend maps. */
export interface FramePoint {
  readonly screenIndex: number;
  readonly fx: number;
  readonly fy: number;
}

/** Failure of a frame check, with OpenClaw's code in `data.code` (the gateway passes it through). */
export function frameError(code: 'COMPUTER_STALE_FRAME' | 'COMPUTER_INVALID_REQUEST', message: string): CapabilityError {
  return new CapabilityError('invalid_arguments', `${code}: ${message}`, { data: { code } });
}

/** Most execution scopes remembered (the oldest is forgotten first). */
const MAX_SCOPES = 64;

/**
 * The display frames `screen.snapshot` issued, the latest per caller scope and screen. A frame id
 * is random and unguessable; only the latest frame of its scope and screen is current, so
 * `computer.act` coordinates always refer to the picture the caller saw last.
 */
export interface DisplayFrames {
  issue(frame: Omit<DisplayFrame, 'id'>): DisplayFrame;
  /**
   * The current frame `id` names for `scope`, or a `COMPUTER_STALE_FRAME` refusal (missing,
   * superseded, another caller's, another screen's); `refWidth` must be the frame's width or the
   * width it was asked for.
   */
  verify(request: { id: string | undefined; scope: string; screenIndex: number | undefined; refWidth: number | undefined }): DisplayFrame;
  /** Forgets every frame of `scope` (its geometry changed, or it ended). */
  forget(scope: string): void;
}

export function createDisplayFrames(): DisplayFrames {
  const scopes = new Map<string, Map<number, DisplayFrame>>();
  return {
    issue(fields) {
      const frame: DisplayFrame = { ...fields, id: `cn1-${randomBytes(16).toString('hex')}` };
      const screens = scopes.get(frame.scope) ?? new Map<number, DisplayFrame>();
      scopes.delete(frame.scope);
      scopes.set(frame.scope, screens);
      screens.set(frame.screenIndex, frame);
      if (scopes.size > MAX_SCOPES) scopes.delete(scopes.keys().next().value!);
      return frame;
    },
    verify({ id, scope, screenIndex, refWidth }) {
      if (id === undefined) throw frameError('COMPUTER_STALE_FRAME', 'coordinates need the displayFrameId of the latest screen.snapshot; take a screenshot first');
      const frame = [...(scopes.get(scope)?.values() ?? [])].find((candidate) => candidate.id === id);
      if (!frame) throw frameError('COMPUTER_STALE_FRAME', 'the coordinate frame is missing or no longer current; take a new screenshot');
      if (screenIndex !== undefined && screenIndex !== frame.screenIndex) throw frameError('COMPUTER_STALE_FRAME', `the frame shows screen ${frame.screenIndex}, not screen ${screenIndex}; take a new screenshot`);
      if (refWidth !== undefined && refWidth !== frame.width && refWidth !== frame.requestedWidth) {
        throw frameError('COMPUTER_STALE_FRAME', `refWidth ${refWidth} is not the frame's width (${frame.width}); take a new screenshot`);
      }
      return frame;
    },
    forget(scope) {
      scopes.delete(scope);
    },
  };
}

/** The frames every screen and computer capability of this process share (unless given their own). */
export const sharedDisplayFrames: DisplayFrames = createDisplayFrames();

/**
 * A pixel of the frame as a fraction of its screen (the pixel's centre), or `COMPUTER_INVALID_REQUEST`
 * when it lies outside the picture.
 */
export function framePoint(frame: DisplayFrame, x: number | undefined, y: number | undefined, what: string): FramePoint {
  if (x === undefined || y === undefined) throw frameError('COMPUTER_INVALID_REQUEST', `${what} needs both x and y`);
  if (!(x >= 0 && y >= 0 && x < frame.width && y < frame.height)) {
    throw frameError('COMPUTER_INVALID_REQUEST', `${what} (${x}, ${y}) is outside the ${frame.width}×${frame.height} frame`);
  }
  return { screenIndex: frame.screenIndex, fx: (Math.floor(x) + 0.5) / frame.width, fy: (Math.floor(y) + 0.5) / frame.height };
}

/** A frame point in pixels of a screen rectangle (clamped inside it). */
export function pointIn(rect: FrameRect, point: FramePoint): { x: number; y: number } {
  return { x: rect.x + Math.min(rect.width - 1, Math.floor(point.fx * rect.width)), y: rect.y + Math.min(rect.height - 1, Math.floor(point.fy * rect.height)) };
}
