/**
 * Camera devices and the ffmpeg arguments that read them, per backend. Pure functions, so the
 * macOS (avfoundation) and Windows (dshow) backends are tested on any machine.
 */
import { mp4OutputArgs } from './screenArgs.js';

/** Where a camera (`camera.list` entry) comes from and how ffmpeg opens it. */
export type CameraSource =
  | { readonly kind: 'virtual'; readonly lavfi: string; readonly audioLavfi?: string | undefined }
  | { readonly kind: 'v4l2'; readonly path: string }
  | { readonly kind: 'avfoundation'; readonly index: number }
  | { readonly kind: 'dshow'; readonly name: string };

/** A camera, canonical fields plus its source. */
export interface CameraDevice {
  readonly id: string;
  readonly name: string;
  readonly position: 'front' | 'back' | 'unspecified';
  readonly deviceType: 'builtIn' | 'external' | 'virtual';
  readonly source: CameraSource;
}

/** Audio that goes with a camera's clip, as ffmpeg input arguments; `undefined` when none. */
export type CameraAudio = readonly string[] | undefined;

const COMMON = ['-hide_banner', '-nostdin', '-loglevel', 'error'];

/** The default sound of a virtual camera's clip: a 440 Hz tone. */
export const VIRTUAL_AUDIO_LAVFI = 'sine=frequency=440:sample_rate=48000';

/** ffmpeg input arguments of a camera's video (and, for avfoundation and dshow, its audio device in the same input). */
export function cameraInputArgs(source: CameraSource, audio?: { readonly avfoundationIndex?: number | undefined; readonly dshowName?: string | undefined }): string[] {
  switch (source.kind) {
    case 'virtual':
      return ['-f', 'lavfi', '-i', source.lavfi];
    case 'v4l2':
      return ['-f', 'v4l2', '-i', source.path];
    case 'avfoundation':
      return ['-f', 'avfoundation', '-framerate', '30', '-i', `${source.index}:${audio?.avfoundationIndex ?? 'none'}`];
    case 'dshow':
      return ['-f', 'dshow', '-i', `video=${source.name}${audio?.dshowName ? `:audio=${audio.dshowName}` : ''}`];
  }
}

/** ffmpeg quality scale (2 best .. 31 worst) for a 0..1 quality. */
export function mjpegQscale(quality: number): number {
  return Math.max(2, Math.min(31, Math.round(31 - quality * 29)));
}

/** One JPEG frame to stdout, no wider than `maxWidth`; real cameras skip a few frames to settle exposure. */
export function snapArgs(source: CameraSource, options: { readonly maxWidth: number; readonly quality: number }): string[] {
  const settle = source.kind === 'virtual' ? '' : "select='gte(n,3)',";
  return [
    ...COMMON,
    ...cameraInputArgs(source),
    '-frames:v',
    '1',
    '-vf',
    `${settle}scale=w='min(iw,${options.maxWidth})':h=-2`,
    '-q:v',
    String(mjpegQscale(options.quality)),
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    'pipe:1',
  ];
}

/** An mp4 clip of `durationMs` to `output`, with the audio inputs given (lavfi tone, pulse, or the device's own). */
export function clipArgs(
  source: CameraSource,
  options: { readonly durationMs: number; readonly output: string; readonly audio: CameraAudio; readonly deviceAudio?: { readonly avfoundationIndex?: number | undefined; readonly dshowName?: string | undefined } },
): string[] {
  const inDevice = options.deviceAudio?.avfoundationIndex !== undefined || options.deviceAudio?.dshowName !== undefined;
  return [
    ...COMMON,
    ...cameraInputArgs(source, options.deviceAudio),
    ...(options.audio ?? []),
    ...mp4OutputArgs({ fps: 30, durationMs: options.durationMs, output: options.output, hasAudio: inDevice || options.audio !== undefined }),
  ];
}

/** Camera position guessed from a device name (laptops name their cameras "FaceTime", "Front", "Rear"). */
export function positionFromName(name: string): CameraDevice['position'] {
  if (/\b(rear|back)\b/i.test(name)) return 'back';
  if (/\b(front|facetime|user[- ]facing|integrated)\b/i.test(name)) return 'front';
  return 'unspecified';
}

/** Whether a device name looks like a built-in camera. */
function builtInName(name: string): boolean {
  return /facetime|integrated|built-?in/i.test(name);
}

/** Cameras from ffmpeg's avfoundation listing (screens "Capture screen N" left out). */
export function avfoundationCameras(devices: readonly { index: number; name: string }[]): CameraDevice[] {
  return devices
    .filter((device) => !/^Capture screen \d+$/.test(device.name))
    .map((device) => ({ id: device.name, name: device.name, position: positionFromName(device.name), deviceType: builtInName(device.name) ? 'builtIn' : 'external', source: { kind: 'avfoundation', index: device.index } }));
}

/** Cameras from ffmpeg's DirectShow listing; the id is the stable alternative name when there is one. */
export function dshowCameras(devices: readonly { name: string; kind: 'video' | 'audio'; alternativeName?: string }[]): CameraDevice[] {
  return devices
    .filter((device) => device.kind === 'video')
    .map((device) => ({ id: device.alternativeName ?? device.name, name: device.name, position: positionFromName(device.name), deviceType: builtInName(device.name) ? 'builtIn' : 'external', source: { kind: 'dshow', name: device.name } }));
}

/**
 * Picks the camera to use: exactly `deviceId` when given (an unknown id fails, never falls back to
 * another camera), else the first facing `facing`, else the first camera.
 */
export function pickCamera(devices: readonly CameraDevice[], request: { readonly deviceId?: string | undefined; readonly facing?: 'front' | 'back' | undefined }): CameraDevice | { readonly error: 'unknown_device' | 'no_camera' } {
  if (request.deviceId !== undefined) return devices.find((device) => device.id === request.deviceId) ?? { error: 'unknown_device' };
  const facing = request.facing ? devices.find((device) => device.position === request.facing) : undefined;
  return facing ?? devices[0] ?? { error: 'no_camera' };
}
