import { z } from 'zod';
import { json } from '../content.js';
import { defineCapability, defineCommand, type Capability, type CommandContext } from '../contract.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import type { CameraBackendContext, VirtualCameraSetting } from './internal/cameraBackend.js';
import { probeFfmpeg } from './internal/ffmpeg.js';
import { delay, imageResult, toBoundedBase64, videoResult } from './internal/media.js';
import { envOf, platformOf, type PackEnvironment } from './internal/voiceProbe.js';
import { announceRecording, requester, withRecordingProgress, type RecordingNotifier } from './internal/recordingNotice.js';
import { normalizeQuality } from './screen.js';

export type { VirtualCameraSetting } from './internal/cameraBackend.js';

export const DEFAULT_CAMERA_CLIP_MS = 3_000;
export const MIN_CAMERA_CLIP_MS = 250;
export const MAX_CAMERA_CLIP_MS = 60_000;

export interface CameraCapabilityOptions extends PackEnvironment {
  /** PATH (ffmpeg) and PulseAudio variables. Default `process.env` (read at call time). */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * ffmpeg lavfi sources listed as cameras, for tests and demos (no kernel module needed), e.g.
   * `{ id: 'test', name: 'Test pattern', lavfi: 'testsrc=size=640x480:rate=30' }`.
   */
  readonly virtualDevices?: readonly VirtualCameraSetting[];
  /** List the machine's own cameras too. Default true. */
  readonly realDevices?: boolean;
  /** Tells the user a clip is being recorded; default a desktop notification; `false` turns it off (tests only). */
  readonly notify?: RecordingNotifier | false;
}

const virtualDeviceSchema = z.object({
  id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  lavfi: z.string().min(1).max(1000),
  audioLavfi: z.string().min(1).max(1000).optional(),
  position: z.enum(['front', 'back', 'unspecified']).optional(),
});

/**
 * Settings section `pluginSettings.camera`: `{ virtualDevices?: [{ id, name, lavfi, audioLavfi?, position? }],
 * realDevices?: boolean }`. Virtual devices are for tests: they stand in for a camera without a kernel module.
 */
export const cameraSettingsSchema = z.object({ virtualDevices: z.array(virtualDeviceSchema).max(16).default([]), realDevices: z.boolean().default(true) });

const facing = z.enum(['front', 'back']).optional();
const deviceId = z.string().min(1).max(500).optional().describe('A camera.list id; an unknown id fails (never another camera).');

const snapInput = z.object({
  facing,
  deviceId,
  maxWidth: z.number().int().min(16).max(8192).default(1600),
  quality: z.number().min(0).max(100).default(0.95).describe('JPEG quality 0..1 (1..100 accepted).'),
  format: z.enum(['jpg', 'jpeg']).default('jpg'),
  delayMs: z.number().int().min(0).max(10_000).default(0),
});

const clipInput = z.object({
  facing,
  deviceId,
  // Clamped, not refused, as OpenClaw's apps do.
  durationMs: z.number().int().default(DEFAULT_CAMERA_CLIP_MS).transform((value) => Math.min(MAX_CAMERA_CLIP_MS, Math.max(MIN_CAMERA_CLIP_MS, value))),
  includeAudio: z.boolean().default(true).describe('Record sound too (needs microphone consent as well; false records without it).'),
  format: z.literal('mp4').default('mp4'),
});

async function backend(options: CameraCapabilityOptions, ctx: CommandContext): Promise<{ module: typeof import('./internal/cameraBackend.js'); context: CameraBackendContext }> {
  const module = await import('./internal/cameraBackend.js');
  return {
    module,
    context: {
      env: envOf(options),
      platform: platformOf(options),
      signal: ctx.signal,
      log: (level, message) => ctx.log(level, message),
      virtualDevices: options.virtualDevices ?? [],
      realDevices: options.realDevices ?? true,
    },
  };
}

function createListCommand(options: CameraCapabilityOptions) {
  return defineCommand({
    name: 'camera.list',
    description: 'Lists the cameras camera.snap and camera.clip can use: id, name, position, deviceType.',
    annotations: { title: 'List cameras', readOnly: true, idempotent: true, openWorld: false },
    input: z.object({}),
    async execute(_args, ctx) {
      const { module, context } = await backend(options, ctx);
      const devices = await module.listCameras(context);
      return json({ devices: devices.map(({ id, name, position, deviceType }) => ({ id, name, position, deviceType })) });
    },
  });
}

function createSnapCommand(options: CameraCapabilityOptions) {
  return defineCommand({
    name: 'camera.snap',
    description: 'Takes a JPEG photo with a camera (deviceId from camera.list, or facing), at most maxWidth wide.',
    annotations: { title: 'Take a photo', readOnly: true, openWorld: false },
    consent: 'camera',
    availability: () => probeFfmpeg(options),
    input: snapInput,
    async execute(args, ctx) {
      const { module, context } = await backend(options, ctx);
      if (args.delayMs > 0) await delay(args.delayMs, ctx.signal);
      const photo = await module.snapCamera(context, { deviceId: args.deviceId, facing: args.facing, maxWidth: args.maxWidth, quality: normalizeQuality(args.quality, 0.95) });
      const base64 = toBoundedBase64(photo.data, 'The photo', 'pass a smaller maxWidth or a lower quality');
      return imageResult({ format: 'jpg', base64, width: photo.width, height: photo.height }, 'image/jpeg');
    },
  });
}

function createClipCommand(options: CameraCapabilityOptions) {
  return defineCommand({
    name: 'camera.clip',
    description: `Records a short mp4 clip with a camera (default ${DEFAULT_CAMERA_CLIP_MS} ms, clamped to ${MIN_CAMERA_CLIP_MS}..${MAX_CAMERA_CLIP_MS}), with sound unless includeAudio is false; the user is notified.`,
    annotations: { title: 'Record a camera clip', readOnly: true, openWorld: false },
    consent: 'camera',
    // The clip's sound is the microphone's: it needs that consent too.
    consentFor: (args) => (args.includeAudio ? ['microphone'] : []),
    availability: () => probeFfmpeg(options),
    input: clipInput,
    async execute(args, ctx) {
      const { module, context } = await backend(options, ctx);
      announceRecording(options.notify, { title: 'capnode is recording with your camera', body: `For ${(args.durationMs / 1000).toFixed(1)} s${args.includeAudio ? ' with sound' : ''}, asked by ${requester(ctx)}.` }, context.env, ctx);
      const clip = await withRecordingProgress(ctx, args.durationMs, 'recording a camera clip', () => module.clipCamera(context, { deviceId: args.deviceId, facing: args.facing, durationMs: args.durationMs, includeAudio: args.includeAudio }));
      const base64 = toBoundedBase64(clip.data, 'The clip', 'record a shorter durationMs or without audio');
      return videoResult({ format: 'mp4', base64, durationMs: args.durationMs, hasAudio: clip.hasAudio }, 'video/mp4', `capnode://camera.clip/${Date.now()}.mp4`);
    },
  });
}

/**
 * The `camera` capability: `camera.list`, `camera.snap`, `camera.clip` through ffmpeg (v4l2 on
 * Linux, avfoundation on macOS, dshow on Windows, lavfi for virtual test devices). Snap and clip
 * need the `camera` consent; a clip with sound (`includeAudio`, the default) needs `microphone` too.
 */
export function createCameraCapability(options: CameraCapabilityOptions = {}): Capability {
  return defineCapability({ category: 'camera', commands: [createListCommand(options), createSnapCommand(options), createClipCommand(options)] });
}

/** The camera plugin of the capability pack; settings `pluginSettings.camera` ({@link cameraSettingsSchema}). */
export const cameraPlugin = definePlugin((context: PluginContext): Capability => {
  const parsed = cameraSettingsSchema.safeParse(context.settings);
  if (!parsed.success) {
    context.log('warning', `pluginSettings.camera ignored: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return createCameraCapability();
  }
  return createCameraCapability({ virtualDevices: parsed.data.virtualDevices, realDevices: parsed.data.realDevices });
});
