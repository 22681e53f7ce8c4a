import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CapabilityError } from '../../errors.js';
import { clipArgs, dshowCameras, avfoundationCameras, pickCamera, snapArgs, VIRTUAL_AUDIO_LAVFI, type CameraDevice } from './cameraArgs.js';
import { ffmpegHasDevice, requireFfmpeg, runMedia } from './ffmpeg.js';
import { MAX_MEDIA_BYTES } from './media.js';
import { pulseServerReachable, readRecording, withSizeLimit, withTempDir, type MediaBackendContext } from './mediaContext.js';
import { jpegSize } from './png.js';
import { parseAvfoundationDevices, parseDshowDevices, PULSE_AUDIO_INPUT } from './screenArgs.js';

/** A virtual camera from settings: an ffmpeg lavfi source standing in for a device (for tests). */
export interface VirtualCameraSetting {
  readonly id: string;
  readonly name: string;
  readonly lavfi: string;
  readonly audioLavfi?: string | undefined;
  readonly position?: 'front' | 'back' | 'unspecified' | undefined;
}

export interface CameraBackendContext extends MediaBackendContext {
  readonly virtualDevices: readonly VirtualCameraSetting[];
  /** Also list the machine's own cameras. */
  readonly realDevices: boolean;
}

/** Linux: capture nodes in /dev/video* (the first node of each device), named from sysfs. */
export async function listV4l2Cameras(): Promise<CameraDevice[]> {
  const entries = (await readdir('/dev').catch(() => [] as string[])).filter((name) => /^video\d+$/.test(name));
  entries.sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  const devices: CameraDevice[] = [];
  for (const entry of entries) {
    const sys = join('/sys/class/video4linux', entry);
    const index = (await readFile(join(sys, 'index'), 'utf8').catch(() => '0')).trim();
    if (index !== '0') continue; // Metadata nodes of the same camera.
    const name = (await readFile(join(sys, 'name'), 'utf8').catch(() => entry)).trim();
    const path = `/dev/${entry}`;
    devices.push({ id: path, name, position: 'unspecified', deviceType: /integrated|built-?in/i.test(name) ? 'builtIn' : 'external', source: { kind: 'v4l2', path } });
  }
  return devices;
}

async function listRealCameras(ctx: CameraBackendContext): Promise<CameraDevice[]> {
  if (ctx.platform === 'linux') return listV4l2Cameras();
  if (ctx.platform !== 'darwin' && ctx.platform !== 'win32') return [];
  const ffmpeg = await requireFfmpeg(ctx.env);
  const args = ctx.platform === 'darwin' ? ['-hide_banner', '-f', 'avfoundation', '-list_devices', 'true', '-i', ''] : ['-hide_banner', '-list_devices', 'true', '-f', 'dshow', '-i', 'dummy'];
  const { stderr } = await runMedia({ file: ffmpeg, args, env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the camera listing', ignoreExitCode: true });
  return ctx.platform === 'darwin' ? avfoundationCameras(parseAvfoundationDevices(stderr).video) : dshowCameras(parseDshowDevices(stderr));
}

/** Every camera: the virtual ones from settings first, then the machine's. */
export async function listCameras(ctx: CameraBackendContext): Promise<CameraDevice[]> {
  const virtual: CameraDevice[] = ctx.virtualDevices.map((device) => ({
    id: device.id,
    name: device.name,
    position: device.position ?? 'unspecified',
    deviceType: 'virtual',
    source: { kind: 'virtual', lavfi: device.lavfi, audioLavfi: device.audioLavfi },
  }));
  return ctx.realDevices ? [...virtual, ...(await listRealCameras(ctx))] : virtual;
}

async function resolveCamera(ctx: CameraBackendContext, request: { deviceId?: string | undefined; facing?: 'front' | 'back' | undefined }): Promise<CameraDevice> {
  const picked = pickCamera(await listCameras(ctx), request);
  if ('error' in picked) {
    if (picked.error === 'unknown_device') throw new CapabilityError('invalid_arguments', `No camera has deviceId "${request.deviceId}"; camera.list shows the cameras.`);
    throw new CapabilityError('unavailable', 'unavailable here: no camera found (connect one, or configure pluginSettings.camera.virtualDevices for tests).');
  }
  return picked;
}

/** One JPEG from the chosen camera (after `delayMs`), with its size. */
export async function snapCamera(ctx: CameraBackendContext, request: { deviceId?: string | undefined; facing?: 'front' | 'back' | undefined; maxWidth: number; quality: number }): Promise<{ data: Buffer; width: number; height: number; device: CameraDevice }> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  const device = await resolveCamera(ctx, request);
  const { stdout } = await runMedia({ file: ffmpeg, args: snapArgs(device.source, request), env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: MAX_MEDIA_BYTES + 1, what: 'the camera snapshot', shrinkHint: 'the media limit (26,148,864 bytes as base64); pass a smaller maxWidth or a lower quality' });
  const size = jpegSize(stdout);
  if (!size) throw new CapabilityError('failed', 'The camera gave no picture.');
  return { data: stdout, ...size, device };
}

async function audioFor(device: CameraDevice, ffmpeg: string, ctx: CameraBackendContext): Promise<{ inputs: readonly string[] | undefined; deviceAudio?: { avfoundationIndex?: number; dshowName?: string } }> {
  const { source } = device;
  if (source.kind === 'virtual') return { inputs: ['-f', 'lavfi', '-i', source.audioLavfi ?? VIRTUAL_AUDIO_LAVFI] };
  if (source.kind === 'v4l2') {
    if (pulseServerReachable(ctx.env) && (await ffmpegHasDevice(ffmpeg, 'pulse', ctx.env, ctx.signal))) return { inputs: PULSE_AUDIO_INPUT };
    ctx.log('warning', 'camera.clip: no PulseAudio server reachable; recording without audio.');
    return { inputs: undefined };
  }
  const args = source.kind === 'avfoundation' ? ['-hide_banner', '-f', 'avfoundation', '-list_devices', 'true', '-i', ''] : ['-hide_banner', '-list_devices', 'true', '-f', 'dshow', '-i', 'dummy'];
  const { stderr } = await runMedia({ file: ffmpeg, args, env: ctx.env, signal: ctx.signal, timeoutMs: 30_000, maxOutputBytes: 1 << 20, what: 'the audio device listing', ignoreExitCode: true });
  if (source.kind === 'avfoundation') {
    const index = parseAvfoundationDevices(stderr).audio[0]?.index;
    return index === undefined ? { inputs: undefined } : { inputs: undefined, deviceAudio: { avfoundationIndex: index } };
  }
  const name = parseDshowDevices(stderr).find((entry) => entry.kind === 'audio')?.name;
  return name === undefined ? { inputs: undefined } : { inputs: undefined, deviceAudio: { dshowName: name } };
}

/** An mp4 clip from the chosen camera, with audio when asked and available. */
export async function clipCamera(ctx: CameraBackendContext, request: { deviceId?: string | undefined; facing?: 'front' | 'back' | undefined; durationMs: number; includeAudio: boolean }): Promise<{ data: Buffer; hasAudio: boolean }> {
  const ffmpeg = await requireFfmpeg(ctx.env);
  const device = await resolveCamera(ctx, request);
  const audio = request.includeAudio ? await audioFor(device, ffmpeg, ctx) : { inputs: undefined };
  const hasAudio = audio.inputs !== undefined || audio.deviceAudio !== undefined;
  return withTempDir(async (dir) => {
    const output = join(dir, 'clip.mp4');
    const args = clipArgs(device.source, { durationMs: request.durationMs, output, audio: audio.inputs, ...(audio.deviceAudio ? { deviceAudio: audio.deviceAudio } : {}) });
    await runMedia({ file: ffmpeg, args: withSizeLimit(args), env: ctx.env, signal: ctx.signal, timeoutMs: request.durationMs + 60_000, maxOutputBytes: 1 << 20, what: 'the camera clip' });
    return { data: await readRecording(output, 'The clip', 'record a shorter durationMs or without audio'), hasAudio };
  });
}
