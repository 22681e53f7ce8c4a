import { access, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { CommandContext } from '../contract.js';
import { defineCapability, defineCommand, type Availability, type Capability } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import type { MicrophoneSource, SttSegment } from './sttEngine.js';
import { ffmpegInstallHint } from './internal/ffmpeg.js';
import { checkRun, firstLine, runTool } from './internal/voiceProcess.js';
import { envOf, findFirst, platformOf, wavDurationMs, type PackEnvironment } from './internal/voiceProbe.js';
import { announceRecording, requester, withRecordingProgress, type RecordingNotifier } from './internal/recordingNotice.js';

/** The longest recording or file excerpt `stt.transcribe` takes (OpenClaw's cap). */
export const MAX_TRANSCRIBE_MS = 30_000;
const DEFAULT_TRANSCRIBE_MS = 10_000;
const MAX_PHRASES = 500;

/** A microphone stand-in: an ffmpeg input format and input (e.g. `lavfi` and `amovie=/path/speech.wav`). */
export type SttMicrophoneSource = MicrophoneSource;

/** Options of {@link createSttCapability}. */
export interface SttOptions extends PackEnvironment {
  /** Directory of the pocketsphinx model (Debian's `/usr/share/pocketsphinx/model/en-us` by default). */
  readonly modelDir?: string;
  /**
   * Records from this ffmpeg input instead of the default microphone (plugin setting
   * `pluginSettings.stt.microphone`; a virtual source for tests, e.g. `{ format: 'lavfi', input: 'amovie=/tmp/x.wav' }`).
   */
  readonly microphone?: SttMicrophoneSource;
  /** Windows: the DirectShow audio device to record from; default the first one ffmpeg lists. */
  readonly windowsDevice?: string;
  /** Tells the user while the microphone records (default: a desktop notification); `false` for none. */
  readonly notify?: RecordingNotifier | false;
}

const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
const INSTALL_ENGINE = 'pocketsphinx and its model (Debian/Ubuntu: apt install pocketsphinx pocketsphinx-en-us)';

const phrases = z
  .array(z.string().min(1).max(200))
  .min(1)
  .max(MAX_PHRASES)
  .optional()
  .describe('Expected phrases: recognition returns one of them (a JSGF grammar). Reliable on synthetic speech, where open vocabulary is not.');
const language = z.string().max(35).optional().describe('BCP 47 tag; the shipped model knows only en-US.');

const transcribeInput = z.strictObject({
  maxDurationMs: z.number().int().min(250).max(MAX_TRANSCRIBE_MS).default(DEFAULT_TRANSCRIBE_MS).describe('Longest recording (or longest part of `inputPath` read), ≤ 30000.'),
  language,
  inputPath: z.string().min(1).max(4096).optional().describe('Transcribe this audio file (absolute path, any format ffmpeg reads) instead of recording from the microphone.'),
  phrases,
});

const listenInput = z.strictObject({
  timeoutMs: z.number().int().min(1000).max(120_000).default(30_000).describe('How long to listen at most, 1000..120000.'),
  endSilenceMs: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(1500)
    .describe('Stop once the speaker has been silent this long after speaking (0: listen for all of timeoutMs).'),
  language,
  phrases,
});

interface Tools {
  readonly ffmpeg: string;
  readonly pocketsphinx: string;
  readonly modelDir: string;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

async function findTools(options: SttOptions): Promise<Tools | { readonly install: string }> {
  const modelDir = options.modelDir ?? DEBIAN_MODEL_DIR;
  const [pocketsphinx, ffmpeg] = await Promise.all([findFirst(['pocketsphinx_continuous', 'pocketsphinx'], options), findFirst(['ffmpeg'], options)]);
  if (!pocketsphinx || !(await exists(path.join(modelDir, 'en-us.lm.bin'))) || !(await exists(path.join(modelDir, 'en-us')))) return { install: INSTALL_ENGINE };
  if (!ffmpeg) return { install: ffmpegInstallHint(platformOf(options)) };
  return { ffmpeg: ffmpeg.file, pocketsphinx: pocketsphinx.file, modelDir };
}

/** PATH lookups for pocketsphinx and ffmpeg, and the model's files. */
export async function probeStt(options: SttOptions = {}): Promise<Availability> {
  const tools = await findTools(options);
  return 'install' in tools ? { available: false, install: tools.install } : { available: true };
}

async function requireTools(options: SttOptions): Promise<Tools> {
  const tools = await findTools(options);
  if ('install' in tools) throw new CapabilityError('unavailable', `unavailable here: install ${tools.install}`);
  return tools;
}

async function checkInputFile(inputPath: string): Promise<string> {
  if (!path.isAbsolute(inputPath) || inputPath.includes('\0')) throw new CapabilityError('invalid_arguments', '`inputPath` must be an absolute path.');
  let info;
  try {
    info = await stat(inputPath);
  } catch {
    throw new CapabilityError('invalid_arguments', '`inputPath` does not exist.');
  }
  // A FIFO or device would let the "file" be a live stream; only regular files.
  if (!info.isFile()) throw new CapabilityError('invalid_arguments', '`inputPath` is not a regular file.');
  return inputPath;
}

async function microphoneSource(options: SttOptions, tools: Tools, signal: AbortSignal): Promise<MicrophoneSource> {
  const engine = await import('./sttEngine.js');
  if (options.microphone) return options.microphone;
  const platform = platformOf(options);
  let device = options.windowsDevice;
  if (platform === 'win32' && !device) {
    const listing = await runTool({ file: tools.ffmpeg, args: ['-hide_banner', '-list_devices', 'true', '-f', 'dshow', '-i', 'dummy'], env: envOf(options), timeoutMs: 10_000, signal });
    device = engine.parseDshowAudioDevices(listing.stderr)[0];
  }
  const source = engine.defaultMicrophone(platform, device);
  if (!source) throw new CapabilityError('unavailable', 'unavailable here: no microphone found (DirectShow lists no audio device).');
  return source;
}

/** Records the microphone, or converts `inputPath`, into a 16 kHz mono WAV at `wav`. */
async function captureAudio(
  wav: string,
  from: { inputPath?: string; durationMs: number; endSilenceMs?: number },
  options: SttOptions,
  tools: Tools,
  ctx: CommandContext,
): Promise<'file' | 'microphone'> {
  const engine = await import('./sttEngine.js');
  const source = from.inputPath === undefined ? await microphoneSource(options, tools, ctx.signal) : undefined;
  const input = from.inputPath === undefined ? engine.microphoneInputArgs(source!) : engine.fileInputArgs(await checkInputFile(from.inputPath));
  if (source) {
    announceRecording(options.notify, { title: 'capnode is listening to your microphone', body: `For up to ${Math.round(from.durationMs / 1000)} s, asked by ${requester(ctx)}.` }, envOf(options), ctx);
  }
  const untilSilence = source && from.endSilenceMs ? from.endSilenceMs : undefined;
  const convert = async () =>
    checkRun(
      await runTool({
        file: tools.ffmpeg,
        args: engine.ffmpegConvertArgs({ input, output: wav, maxDurationMs: from.durationMs, ...(untilSilence ? { filter: engine.endOfSpeechFilter(untilSilence) } : {}) }),
        env: envOf(options),
        timeoutMs: from.durationMs + 15_000,
        signal: ctx.signal,
        // ffmpeg ends a recording cleanly (WAV trailer written) on SIGINT.
        ...(untilSilence ? { stopWhen: engine.speechEnded, stopSignal: 'SIGINT' as const } : {}),
      }),
      source ? 'Recording' : 'Audio conversion',
    );
  const result = source ? await withRecordingProgress(ctx, from.durationMs, 'listening', convert) : await convert();
  if (result.exitCode !== 0 && !result.stopped) {
    const detail = firstLine(result.stderr, `exit code ${result.exitCode ?? result.signal}`);
    if (source) throw new CapabilityError('unavailable', `unavailable here: the microphone (${source.format} ${source.input}) cannot be recorded: ${detail}`);
    throw new CapabilityError('invalid_arguments', `\`inputPath\` is not audio ffmpeg can read: ${detail}`);
  }
  return source ? 'microphone' : 'file';
}

async function recognize(wav: string, dir: string, expected: readonly string[] | undefined, tools: Tools, options: SttOptions, signal: AbortSignal): Promise<{ segments: SttSegment[]; engine: string }> {
  const engine = await import('./sttEngine.js');
  const model = engine.pocketsphinxModel(tools.modelDir);
  let jsgf: string | undefined;
  if (expected) {
    const unknown = await engine.unknownWords(expected, model.dict);
    if (unknown.length > 0) throw new CapabilityError('invalid_arguments', `\`phrases\` has words the model does not know: ${unknown.slice(0, 10).join(', ')}.`, { data: { unknownWords: unknown.slice(0, 50) } });
    jsgf = path.join(dir, 'phrases.gram');
    await writeFile(jsgf, engine.buildJsgf(expected));
  }
  const result = checkRun(
    await runTool({ file: tools.pocketsphinx, args: engine.pocketsphinxArgs({ wav, model, ...(jsgf ? { jsgf } : {}), platform: platformOf(options) }), env: envOf(options), timeoutMs: 120_000, signal }),
    'Speech recognition',
  );
  if (result.exitCode !== 0) throw new CapabilityError('failed', `pocketsphinx failed: ${firstLine(result.stderr, `exit code ${result.exitCode ?? result.signal}`)}`);
  return { segments: engine.parsePocketsphinxOutput(result.stdout.toString('utf8')), engine: jsgf ? 'pocketsphinx-jsgf' : 'pocketsphinx' };
}

interface TranscribeRequest {
  readonly durationMs: number;
  readonly endSilenceMs?: number;
  readonly language: string | undefined;
  readonly inputPath?: string;
  readonly phrases?: readonly string[];
}

async function transcribe(request: TranscribeRequest, options: SttOptions, ctx: CommandContext) {
  const { normalizeSttLanguage } = await import('./sttEngine.js');
  const lang = normalizeSttLanguage(request.language);
  if (!lang) throw new CapabilityError('unsupported', `Language ${JSON.stringify(request.language)} is not supported: the offline model knows only en-US.`);
  const tools = await requireTools(options);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capnode-stt-'));
  try {
    const wav = path.join(dir, 'audio.wav');
    const from = { durationMs: request.durationMs, ...(request.inputPath !== undefined ? { inputPath: request.inputPath } : {}), ...(request.endSilenceMs ? { endSilenceMs: request.endSilenceMs } : {}) };
    const source = await captureAudio(wav, from, options, tools, ctx);
    const audioMs = wavDurationMs(await readFile(wav)) ?? 0;
    const { segments, engine } = await recognize(wav, dir, request.phrases, tools, options, ctx.signal);
    const text = segments.map((segment) => segment.text).join(' ');
    return { transcribed: text.length > 0, text, durationMs: audioMs, language: lang, engineEffective: engine, source, segments };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function reply(result: Record<string, unknown>) {
  return { ok: true as const, content: [{ type: 'text' as const, text: JSON.stringify(result, null, 2) }], structured: result };
}

/**
 * `stt.transcribe` (an audio file, or the default microphone for up to 30 s), `stt.listen` (the
 * microphone for up to 120 s, with segments) and `stt.status`, offline with pocketsphinx. Both
 * recognizing commands need `microphone` consent, whatever their input.
 */
export function createSttCapability(options: SttOptions = {}): Capability {
  const availability = () => probeStt(options);
  return defineCapability({
    category: 'talk',
    commands: [
      defineCommand({
        name: 'stt.transcribe',
        description: 'Transcribes speech from an audio file, or from the default microphone for up to 30 s, offline.',
        annotations: { title: 'Transcribe speech', readOnly: true },
        input: transcribeInput,
        consent: 'microphone',
        availability,
        async execute(args, ctx) {
          const { segments: _segments, ...result } = await transcribe(
            { durationMs: args.maxDurationMs, language: args.language, ...(args.inputPath !== undefined ? { inputPath: args.inputPath } : {}), ...(args.phrases ? { phrases: args.phrases } : {}) },
            options,
            ctx,
          );
          return reply(result);
        },
      }),
      defineCommand({
        name: 'stt.listen',
        description: 'Listens to the default microphone until the speaker stops (or `timeoutMs`) and returns what was said, utterance by utterance.',
        annotations: { title: 'Listen', readOnly: true },
        input: listenInput,
        consent: 'microphone',
        availability,
        async execute(args, ctx) {
          return reply(await transcribe({ durationMs: args.timeoutMs, endSilenceMs: args.endSilenceMs, language: args.language, ...(args.phrases ? { phrases: args.phrases } : {}) }, options, ctx));
        },
      }),
      defineCommand({
        name: 'stt.status',
        description: 'Whether offline speech recognition and a microphone are ready, and what to install otherwise.',
        annotations: { title: 'Speech recognition status', readOnly: true, idempotent: true },
        input: z.strictObject({}),
        async execute() {
          const tools = await findTools(options);
          const ready = !('install' in tools);
          const microphone = options.microphone ? `${options.microphone.format} ${options.microphone.input} (configured)` : platformOf(options) === 'darwin' ? 'avfoundation :0' : platformOf(options) === 'win32' ? 'dshow (first audio device)' : 'pulse default';
          return reply({
            engines: [{ name: 'pocketsphinx', available: ready, ready, languages: ready ? ['en-US'] : [], modelDir: options.modelDir ?? DEBIAN_MODEL_DIR, ...(ready ? {} : { install: tools.install }) }],
            microphone,
            ready,
          });
        },
      }),
    ],
  });
}

function isMicrophone(value: unknown): value is MicrophoneSource {
  const record = value as Record<string, unknown> | null;
  return typeof record === 'object' && record !== null && typeof record.format === 'string' && typeof record.input === 'string';
}

/** Reads `pluginSettings.stt`: `modelDir`, `microphone` ({ format, input }; for tests), `windowsDevice`. */
export function sttOptionsFromSettings(settings: PluginContext['settings']): SttOptions {
  return {
    ...(typeof settings.modelDir === 'string' ? { modelDir: settings.modelDir } : {}),
    ...(isMicrophone(settings.microphone) ? { microphone: { format: settings.microphone.format, input: settings.microphone.input } } : {}),
    ...(typeof settings.windowsDevice === 'string' ? { windowsDevice: settings.windowsDevice } : {}),
  };
}

/** The speech recognition plugin of the pack. */
export const sttPlugin = definePlugin((context: PluginContext) => createSttCapability(sttOptionsFromSettings(context.settings)));
