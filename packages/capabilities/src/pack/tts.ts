import { realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Content } from '../content.js';
import { defineCapability, defineCommand, type Availability, type Capability } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import { toBoundedBase64 } from './internal/media.js';
import { envOf, findFirst, platformOf, type PackEnvironment } from './internal/voiceProbe.js';
import type { TtsProviderName } from './ttsBackend.js';

export type { TtsProviderName } from './ttsBackend.js';

/** Options of {@link createTtsCapability}. */
export interface TtsOptions extends PackEnvironment {
  /**
   * The only directory `tts.speak`'s `outputPath` may write into (plugin setting
   * `pluginSettings.tts.outputDir`; meant for tests). Without it, `outputPath` is refused.
   */
  readonly outputDir?: string;
}

interface ProviderInfo {
  readonly name: TtsProviderName;
  readonly programs: readonly string[];
  readonly install: string;
  readonly writesFiles: boolean;
}

const PROVIDERS: Readonly<Record<TtsProviderName, ProviderInfo>> = {
  'espeak-ng': { name: 'espeak-ng', programs: ['espeak-ng'], install: 'espeak-ng (Debian/Ubuntu: apt install espeak-ng)', writesFiles: true },
  'speech-dispatcher': { name: 'speech-dispatcher', programs: ['spd-say'], install: 'speech-dispatcher (apt install speech-dispatcher)', writesFiles: false },
  say: { name: 'say', programs: ['say'], install: '`say` (/usr/bin/say, part of macOS)', writesFiles: true },
  sapi: { name: 'sapi', programs: ['powershell', 'pwsh'], install: 'Windows PowerShell with System.Speech', writesFiles: true },
};

/** The providers of a platform, preferred first. */
export function ttsProvidersFor(platform: NodeJS.Platform): readonly TtsProviderName[] {
  if (platform === 'darwin') return ['say'];
  if (platform === 'win32') return ['sapi'];
  return ['espeak-ng', 'speech-dispatcher'];
}

/** A minute plus 100 ms a character: 10,000 characters at 175 words per minute take about ten minutes to say. */
function speechTimeoutMs(text: string): number {
  return 60_000 + text.length * 100;
}
const MAX_TEXT_CHARS = 10_000;

const speakInput = z.strictObject({
  text: z.string().min(1).max(MAX_TEXT_CHARS).describe('What to say.'),
  provider: z.string().max(64).optional().describe('Preferred provider (espeak-ng, speech-dispatcher, say, sapi); others fall back to the default (`fellBack: true`).'),
  voiceId: z
    .string()
    .max(128)
    .regex(/^(?!-)[\w .+()-]*$/, 'a voice name: letters, digits, spaces and . + ( ) - _, not starting with -')
    .optional()
    .describe('Voice of the provider, e.g. espeak-ng `en-us+m1` (its default here), a `say -v` name, a SAPI voice name.'),
  model: z.string().max(128).optional().describe('Model of a cloud provider; local providers have none and ignore it.'),
  interrupt: z.boolean().default(false).describe('Stop speech this plugin is playing before speaking (otherwise it waits its turn).'),
  rate: z.number().int().min(80).max(450).optional().describe('Words per minute (espeak-ng default 175).'),
  returnAudio: z.boolean().default(false).describe('Return the speech as WAV audio content instead of playing it.'),
  outputPath: z.string().max(4096).optional().describe('Write the speech as a new WAV file here instead of playing it; only inside the configured `outputDir` (for tests).'),
});

type SpeakArgs = z.output<typeof speakInput>;

interface ResolvedProvider {
  readonly name: TtsProviderName;
  readonly file: string;
}

async function locate(name: TtsProviderName, options: PackEnvironment): Promise<ResolvedProvider | undefined> {
  const found = await findFirst(PROVIDERS[name].programs, options);
  return found && { name, file: found.file };
}

/** Other spellings of the local providers; `auto`, `system`, `local` and `default` mean the platform's default. */
const PROVIDER_ALIASES: Readonly<Record<string, TtsProviderName | 'default'>> = {
  espeak: 'espeak-ng',
  'espeak-ng': 'espeak-ng',
  'speech-dispatcher': 'speech-dispatcher',
  'spd-say': 'speech-dispatcher',
  speechd: 'speech-dispatcher',
  say: 'say',
  macos: 'say',
  sapi: 'sapi',
  windows: 'sapi',
  auto: 'default',
  system: 'default',
  local: 'default',
  default: 'default',
};

/** Picks the requested provider when it is local, present and able to do the job; else the first that is. */
async function chooseProvider(requested: string | undefined, needsFile: boolean, options: PackEnvironment): Promise<{ provider: ResolvedProvider; fellBack: boolean }> {
  const candidates = ttsProvidersFor(platformOf(options)).filter((name) => !needsFile || PROVIDERS[name].writesFiles);
  const alias = requested === undefined ? 'default' : PROVIDER_ALIASES[requested.toLowerCase()];
  const wanted = candidates.find((name) => name === alias);
  if (wanted) {
    const provider = await locate(wanted, options);
    if (provider) return { provider, fellBack: false };
  }
  for (const name of candidates) {
    const provider = await locate(name, options);
    if (provider) return { provider, fellBack: alias !== 'default' };
  }
  const install = PROVIDERS[ttsProvidersFor(platformOf(options))[0] ?? 'espeak-ng'].install;
  throw new CapabilityError('unavailable', `unavailable here: install ${install}`);
}

/** An `outputPath` inside `outputDir` (real paths), for a file that does not exist yet. */
async function checkOutputPath(outputPath: string, outputDir: string | undefined): Promise<string> {
  if (!outputDir) throw new CapabilityError('invalid_arguments', '`outputPath` is refused: no output directory is configured (pluginSettings.tts.outputDir).');
  if (!path.isAbsolute(outputPath) || !outputPath.endsWith('.wav')) throw new CapabilityError('invalid_arguments', '`outputPath` must be an absolute path ending in .wav.');
  let parent: string;
  let root: string;
  try {
    parent = await realpath(path.dirname(outputPath));
    root = await realpath(outputDir);
  } catch {
    throw new CapabilityError('invalid_arguments', "`outputPath`'s directory does not exist.");
  }
  const relative = path.relative(root, parent);
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw new CapabilityError('invalid_arguments', '`outputPath` must be inside the configured output directory.');
  if (!(await stat(parent)).isDirectory()) throw new CapabilityError('invalid_arguments', "`outputPath`'s parent is not a directory.");
  return path.join(parent, path.basename(outputPath));
}

/** Serializes playback; `interrupt` aborts what plays now. */
function createSpeakerQueue() {
  const playing = new Set<AbortController>();
  let tail: Promise<unknown> = Promise.resolve();
  return {
    interrupt() {
      for (const controller of playing) controller.abort();
    },
    run<T>(signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
      const controller = new AbortController();
      const onAbort = () => controller.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const next = tail.then(async () => {
        playing.add(controller);
        try {
          return await work(AbortSignal.any([controller.signal, signal]));
        } finally {
          playing.delete(controller);
          signal.removeEventListener('abort', onAbort);
        }
      });
      tail = next.catch(() => undefined);
      return next;
    },
  };
}

async function speak(args: SpeakArgs, options: TtsOptions, queue: ReturnType<typeof createSpeakerQueue>, signal: AbortSignal) {
  const toFile = args.outputPath !== undefined || args.returnAudio;
  const target = args.outputPath === undefined ? undefined : await checkOutputPath(args.outputPath, options.outputDir);
  const { provider, fellBack } = await chooseProvider(args.provider, toFile, options);
  const { runSpeech } = await import('./ttsBackend.js');
  const request = { text: args.text, ...(args.voiceId ? { voiceId: args.voiceId } : {}), ...(args.rate !== undefined ? { rate: args.rate } : {}) };
  const run = (runSignal: AbortSignal) => runSpeech(provider.name, provider.file, request, { toWav: toFile, env: envOf(options), signal: runSignal, timeoutMs: speechTimeoutMs(args.text) });
  if (args.interrupt) queue.interrupt();
  let interrupted = false;
  const spoken = toFile
    ? await run(signal)
    : await queue.run(signal, async (runSignal) => {
        try {
          return await run(runSignal);
        } catch (error) {
          // Interrupted by a later call (not cancelled by our caller): a result, not a failure.
          if (!signal.aborted && runSignal.aborted) {
            interrupted = true;
            return { durationMs: 0 };
          }
          throw error;
        }
      });
  if (target && spoken.wav) {
    try {
      await writeFile(target, spoken.wav, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new CapabilityError('invalid_arguments', '`outputPath` exists already; give a new file name.');
      throw error;
    }
  }
  const result = {
    spoken: !interrupted,
    provider: provider.name,
    requestedProvider: args.provider ?? 'auto',
    fellBack,
    contentType: toFile ? 'audio/wav' : 'audio/x-device-playback',
    durationMs: spoken.durationMs,
    ...(interrupted ? { interrupted: true } : {}),
    ...(target ? { outputPath: target } : {}),
    ...(spoken.wav ? { bytes: spoken.wav.length } : {}),
  };
  const content: Content[] = [{ type: 'text', text: JSON.stringify(result) }];
  if (args.returnAudio && spoken.wav) content.unshift({ type: 'audio', data: toBoundedBase64(spoken.wav, 'The speech audio', 'speak a shorter text, or write it to `outputPath`'), mimeType: 'audio/wav' });
  return { ok: true as const, content, structured: result };
}

async function status(options: TtsOptions) {
  const names = ttsProvidersFor(platformOf(options));
  const providers = await Promise.all(
    names.map(async (name) => {
      const found = await locate(name, options);
      return { name, available: found !== undefined, ready: found !== undefined, canWriteFile: PROVIDERS[name].writesFiles, ...(found ? {} : { install: PROVIDERS[name].install }) };
    }),
  );
  const ready = providers.find((provider) => provider.available);
  return { providers, defaultProvider: ready?.name ?? null, ready: ready !== undefined };
}

/** At least one provider of this platform on PATH. */
export async function probeTts(options: PackEnvironment = {}): Promise<Availability> {
  const names = ttsProvidersFor(platformOf(options));
  for (const name of names) if (await locate(name, options)) return { available: true };
  return { available: false, install: PROVIDERS[names[0] ?? 'espeak-ng'].install };
}

/**
 * `tts.speak` (OpenClaw's shape: `{ spoken, provider, requestedProvider, fellBack, contentType,
 * durationMs }`; plays, returns WAV audio, or writes a WAV file) and `tts.status` (providers and readiness).
 */
export function createTtsCapability(options: TtsOptions = {}): Capability {
  const queue = createSpeakerQueue();
  return defineCapability({
    category: 'talk',
    commands: [
      defineCommand({
        name: 'tts.speak',
        description: 'Speaks text aloud on this machine (or returns it as WAV audio) with a local speech synthesizer.',
        annotations: { title: 'Speak text', readOnly: false, destructive: false },
        input: speakInput,
        availability: () => probeTts(options),
        execute: (args, ctx) => speak(args, options, queue, ctx.signal),
      }),
      defineCommand({
        name: 'tts.status',
        description: 'Lists the local speech synthesizers and whether each is ready.',
        annotations: { title: 'Speech synthesis status', readOnly: true, idempotent: true },
        input: z.strictObject({}),
        async execute() {
          const result = await status(options);
          return { ok: true, content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structured: result };
        },
      }),
    ],
  });
}

/** Reads `pluginSettings.tts` (`outputDir`). */
export function ttsOptionsFromSettings(settings: PluginContext['settings']): TtsOptions {
  return typeof settings.outputDir === 'string' && settings.outputDir ? { outputDir: settings.outputDir } : {};
}

/** The speech synthesis plugin of the pack (`pluginSettings.tts.outputDir` for tests). */
export const ttsPlugin = definePlugin((context: PluginContext) => createTtsCapability(ttsOptionsFromSettings(context.settings)));
