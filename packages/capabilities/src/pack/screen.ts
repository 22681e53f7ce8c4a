import { existsSync } from 'node:fs';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCapability, defineCommand, type Availability, type AvailabilityProbe, type Capability, type CommandContext } from '../contract.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import { announceRecording, requester, withRecordingProgress, type RecordingNotifier } from './internal/recordingNotice.js';
import { parseDisplay } from './internal/x11Display.js';
import { probeFfmpeg } from './internal/ffmpeg.js';
import { imageResult, toBoundedBase64, videoResult } from './internal/media.js';
import { envOf, platformOf, type PackEnvironment } from './internal/voiceProbe.js';
import type { ScreenBackendContext } from './internal/screenBackend.js';
import { sharedDisplayFrames, type DisplayFrames } from './internal/displayFrames.js';

export type { RecordingNotifier } from './internal/recordingNotice.js';

/** Longest `screen.record`, as OpenClaw's agent caps it. */
export const MAX_SCREEN_RECORD_MS = 300_000;
export const DEFAULT_SCREEN_RECORD_MS = 10_000;

export interface ScreenCapabilityOptions extends PackEnvironment {
  /** PATH (ffmpeg, screencapture, PowerShell), DISPLAY and XAUTHORITY. Default `process.env` (read at call time). */
  readonly env?: NodeJS.ProcessEnv;
  /** X display to capture instead of `env.DISPLAY` (Linux). */
  readonly display?: string;
  /** Tells the user a recording runs; default a desktop notification; `false` turns it off (tests only). */
  readonly notify?: RecordingNotifier | false;
  /** Where snapshots record the frames `computer.act` coordinates refer to; default the process-wide store. */
  readonly frames?: DisplayFrames;
}

/** Settings section `pluginSettings.screen`: `{ display?: ":1" }`. */
const screenSettingsSchema = z.object({ display: z.string().min(1).optional() });

const quality = z.number().min(0).max(100).describe('JPEG quality 0..1 (1..100 accepted).');

const snapshotInput = z.object({
  executionId: z.string().min(1).max(128).optional().describe("OpenClaw's execution id: the frame is bound to it (computer.act must send the same)."),
  screenIndex: z.number().int().min(0).max(63).optional().describe('Which screen (see screen.list); default 0.'),
  monitor: z.number().int().min(0).max(63).optional().describe('Alias of screenIndex (Windows tray).'),
  maxWidth: z.number().int().min(16).max(16384).optional().describe('Downscale to at most this width (aspect kept).'),
  format: z.enum(['png', 'jpeg', 'jpg']).default('png'),
  quality: quality.optional(),
  includePointer: z.boolean().default(false).describe('Draw the mouse pointer into the picture.'),
});

const recordInput = z.object({
  durationMs: z.number().int().min(250).max(MAX_SCREEN_RECORD_MS).default(DEFAULT_SCREEN_RECORD_MS),
  fps: z.number().min(1).max(60).default(10),
  screenIndex: z.number().int().min(0).max(63).optional(),
  monitor: z.number().int().min(0).max(63).optional().describe('Alias of screenIndex (Windows tray).'),
  includeAudio: z.boolean().default(false).describe('Record the default audio input too (needs microphone consent as well).'),
  includePointer: z.boolean().default(true),
  format: z.literal('mp4').default('mp4'),
});

/** Normalizes quality: 0..1 as given, tray-style 1..100 (anything above 1) divided by 100. */
export function normalizeQuality(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  return value > 1 ? value / 100 : value;
}

function displayOf(options: ScreenCapabilityOptions): string | undefined {
  return options.display ?? envOf(options).DISPLAY;
}

/** Whether the screen can be captured: an X display with a socket (Linux), screencapture (macOS), PowerShell (Windows). */
export function probeScreen(options: ScreenCapabilityOptions): Availability {
  const platform = platformOf(options);
  if (platform === 'darwin' || platform === 'win32') return { available: true };
  const address = parseDisplay(displayOf(options));
  if (!address) return { available: false, install: 'an X11 display (Xorg, or XWayland under Wayland) with DISPLAY set' };
  if (address.kind === 'unix' && !existsSync(address.path)) return { available: false, install: `an X11 server on ${displayOf(options)} (no socket at ${address.path})` };
  return { available: true };
}

function recordProbe(options: ScreenCapabilityOptions): AvailabilityProbe {
  return async () => {
    const screen = probeScreen(options);
    if (!screen.available) return screen;
    return probeFfmpeg(options);
  };
}

async function backend(options: ScreenCapabilityOptions, ctx: CommandContext): Promise<{ module: typeof import('./internal/screenBackend.js'); context: ScreenBackendContext }> {
  const module = await import('./internal/screenBackend.js');
  const context: ScreenBackendContext = { env: envOf(options), platform: platformOf(options), signal: ctx.signal, log: (level, message) => ctx.log(level, message), display: displayOf(options) };
  return { module, context };
}

function createSnapshotCommand(options: ScreenCapabilityOptions) {
  return defineCommand({
    name: 'screen.snapshot',
    description: 'Takes a screenshot of one screen (PNG or JPEG), optionally downscaled to maxWidth; its displayFrameId and width bind computer.act coordinates to this picture.',
    annotations: { title: 'Screenshot', readOnly: true, openWorld: false },
    consent: 'screen',
    availability: () => probeScreen(options),
    input: snapshotInput,
    async execute(args, ctx) {
      const format = args.format === 'png' ? 'png' : 'jpeg';
      const screenIndex = args.screenIndex ?? args.monitor ?? 0;
      const { module, context } = await backend(options, ctx);
      const request = { screenIndex, maxWidth: args.maxWidth, format, quality: normalizeQuality(args.quality, 0.85), includePointer: args.includePointer } as const;
      const image = await module.takeSnapshot(request, context);
      const base64 = toBoundedBase64(image.data, 'The screenshot', 'pass a smaller maxWidth, or format "jpeg" with a lower quality');
      const source = image.source && { x: image.source.x, y: image.source.y, width: image.source.width, height: image.source.height };
      const frame = (options.frames ?? sharedDisplayFrames).issue({ scope: args.executionId ?? '', screenIndex, width: image.width, height: image.height, requestedWidth: args.maxWidth, source });
      const fields = { format, base64, width: image.width, height: image.height, screenIndex, displayFrameId: frame.id, capturedAtMs: Date.now() };
      return imageResult(fields, format === 'png' ? 'image/png' : 'image/jpeg');
    },
  });
}

function createRecordCommand(options: ScreenCapabilityOptions) {
  return defineCommand({
    name: 'screen.record',
    description: `Records one screen to an mp4 (default ${DEFAULT_SCREEN_RECORD_MS / 1000} s, at most ${MAX_SCREEN_RECORD_MS / 1000} s); the user is notified while it runs.`,
    annotations: { title: 'Record the screen', readOnly: true, openWorld: false },
    consent: 'screen',
    // Sound comes from the microphone: it needs that consent too.
    consentFor: (args) => (args.includeAudio ? ['microphone'] : []),
    availability: recordProbe(options),
    input: recordInput,
    async execute(args, ctx) {
      const screenIndex = args.screenIndex ?? args.monitor ?? 0;
      const { module, context } = await backend(options, ctx);
      announceRecording(options.notify, { title: 'capnode is recording your screen', body: `For ${Math.round(args.durationMs / 1000)} s, asked by ${requester(ctx)}.` }, context.env, ctx);
      const request = { screenIndex, durationMs: args.durationMs, fps: args.fps, includeAudio: args.includeAudio, includePointer: args.includePointer };
      const recorded = await withRecordingProgress(ctx, args.durationMs, 'recording the screen', () => module.recordScreen(request, context));
      const base64 = toBoundedBase64(recorded.data, 'The recording', 'record a shorter durationMs or a lower fps');
      const fields = { format: 'mp4', base64, durationMs: args.durationMs, fps: args.fps, screenIndex, hasAudio: recorded.hasAudio };
      return videoResult(fields, 'video/mp4', `capnode://screen.record/${Date.now()}.mp4`);
    },
  });
}

function createListCommand(options: ScreenCapabilityOptions) {
  return defineCommand({
    name: 'screen.list',
    description: 'Lists the screens that screen.snapshot and screen.record can capture, with their index, name, position and size.',
    annotations: { title: 'List screens', readOnly: true, idempotent: true, openWorld: false },
    consent: 'screen',
    availability: () => probeScreen(options),
    input: z.object({}),
    async execute(_args, ctx) {
      const { module, context } = await backend(options, ctx);
      const screens = await module.listScreens(context);
      return json({ screens: screens.map((screen) => ({ ...screen })) });
    },
  });
}

/**
 * The `screen` capability: `screen.list`, `screen.snapshot`, `screen.record`, each behind the
 * `screen` consent. Backends: X11 over the display socket + ffmpeg x11grab (Linux), screencapture
 * and ffmpeg avfoundation (macOS), System.Drawing and ffmpeg gdigrab (Windows); loaded on first use.
 */
export function createScreenCapability(options: ScreenCapabilityOptions = {}): Capability {
  return defineCapability({ category: 'screen', commands: [createListCommand(options), createSnapshotCommand(options), createRecordCommand(options)] });
}

/** The screen plugin of the capability pack; settings `pluginSettings.screen: { display? }`. */
export const screenPlugin = definePlugin((context: PluginContext): Capability => {
  const parsed = screenSettingsSchema.safeParse(context.settings);
  if (!parsed.success) context.log('warning', `pluginSettings.screen ignored: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const display = parsed.success ? parsed.data.display : undefined;
  return createScreenCapability(display === undefined ? {} : { display });
});
