import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CapabilityError } from '../errors.js';
import { checkRun, firstLine, powershellArgs, runTool } from './internal/voiceProcess.js';
import { wavDurationMs } from './internal/voiceProbe.js';

/** A local speech synthesizer: espeak-ng and speech-dispatcher (Linux), `say` (macOS), SAPI (Windows). */
export type TtsProviderName = 'espeak-ng' | 'speech-dispatcher' | 'say' | 'sapi';

/** What to say and how. */
export interface SpeechRequest {
  readonly text: string;
  readonly voiceId?: string;
  /** Words per minute. */
  readonly rate?: number;
}

/** One program run: its argv, its stdin and extra environment. */
export interface SpeechInvocation {
  readonly args: string[];
  readonly input?: string;
  readonly env?: Record<string, string>;
}

/**
 * espeak-ng's default voice and rate: `en-us+m1` at 175 words per minute, the combination Debian's
 * pocketsphinx recognizes reliably (the stock voice's "hello world" is heard as "well").
 */
export const ESPEAK_DEFAULT_VOICE = 'en-us+m1';
export const ESPEAK_DEFAULT_RATE = 175;

/** espeak-ng: text on stdin (never argv, so text starting with `-` is spoken); `-w` writes a WAV instead of playing. */
export function espeakArgs(request: SpeechRequest, wavFile?: string): SpeechInvocation {
  return {
    args: ['-v', request.voiceId ?? ESPEAK_DEFAULT_VOICE, '-s', String(request.rate ?? ESPEAK_DEFAULT_RATE), ...(wavFile ? ['-w', wavFile] : []), '--stdin'],
    input: request.text,
  };
}

/** spd-say (speech-dispatcher, playback only): waits for the end (`-w`), text on stdin (`-e`); rate mapped to -100..100. */
export function spdSayArgs(request: SpeechRequest): SpeechInvocation {
  const args = ['-w', '-e'];
  if (request.rate !== undefined) args.push('-r', String(Math.max(-100, Math.min(100, Math.round((request.rate - 180) / 2)))));
  if (request.voiceId) args.push('-y', request.voiceId);
  return { args, input: request.text };
}

/** macOS `say`: text from stdin (`-f -`); `-o` writes a 16-bit WAV instead of playing. */
export function sayArgs(request: SpeechRequest, wavFile?: string): SpeechInvocation {
  const args: string[] = [];
  if (request.voiceId) args.push('-v', request.voiceId);
  if (request.rate !== undefined) args.push('-r', String(request.rate));
  if (wavFile) args.push('-o', wavFile, '--file-format=WAVE', '--data-format=LEI16@22050');
  args.push('-f', '-');
  return { args, input: request.text };
}

/** SAPI through PowerShell (System.Speech); text, voice, rate and file reach the script through the environment. */
export const SAPI_SCRIPT = `$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Speech
$s = New-Object System.Speech.Synthesis.SpeechSynthesizer
if ($env:CAPNODE_TTS_VOICE) { $s.SelectVoice($env:CAPNODE_TTS_VOICE) }
if ($env:CAPNODE_TTS_RATE) { $s.Rate = [int]$env:CAPNODE_TTS_RATE }
if ($env:CAPNODE_TTS_FILE) { $s.SetOutputToWaveFile($env:CAPNODE_TTS_FILE) } else { $s.SetOutputToDefaultAudioDevice() }
$s.Speak($env:CAPNODE_TTS_TEXT)
$s.Dispose()
`;

/** SAPI rate (-10..10, 0 ≈ 180 words per minute) for a words-per-minute rate. */
export function sapiRate(wordsPerMinute: number): number {
  return Math.max(-10, Math.min(10, Math.round((wordsPerMinute - 180) / 20)));
}

export function sapiArgs(request: SpeechRequest, wavFile?: string): SpeechInvocation {
  const env: Record<string, string> = { CAPNODE_TTS_TEXT: request.text };
  if (request.voiceId) env.CAPNODE_TTS_VOICE = request.voiceId;
  if (request.rate !== undefined) env.CAPNODE_TTS_RATE = String(sapiRate(request.rate));
  if (wavFile) env.CAPNODE_TTS_FILE = wavFile;
  return { args: powershellArgs(SAPI_SCRIPT), env };
}

/** The invocation for `provider`; `undefined` when it cannot write a file and `wavFile` is asked for. */
export function speechInvocation(provider: TtsProviderName, request: SpeechRequest, wavFile?: string): SpeechInvocation | undefined {
  switch (provider) {
    case 'espeak-ng':
      return espeakArgs(request, wavFile);
    case 'speech-dispatcher':
      return wavFile ? undefined : spdSayArgs(request);
    case 'say':
      return sayArgs(request, wavFile);
    case 'sapi':
      return sapiArgs(request, wavFile);
  }
}

/** espeak-ng and ALSA report a missing audio device on stderr and still exit 0. */
export function playbackFailure(stderr: string): string | undefined {
  if (/snd_pcm_open|Unknown PCM|cannot find card|^error: /m.test(stderr) || /could not open audio|audio device/i.test(stderr)) return firstLine(stderr, 'no audio output device');
  return undefined;
}

export interface SpeakResult {
  readonly durationMs: number;
  /** WAV bytes when a file was asked for. */
  readonly wav?: Buffer;
}

/** Speaks (or synthesizes to WAV with `toWav`) through `file`, the provider's program. Cancellation kills it. */
export async function runSpeech(
  provider: TtsProviderName,
  file: string,
  request: SpeechRequest,
  options: { readonly toWav: boolean; readonly env: NodeJS.ProcessEnv; readonly signal: AbortSignal; readonly timeoutMs: number },
): Promise<SpeakResult> {
  const dir = options.toWav ? await mkdtemp(path.join(os.tmpdir(), 'capnode-tts-')) : undefined;
  try {
    const wavFile = dir ? path.join(dir, 'speech.wav') : undefined;
    const invocation = speechInvocation(provider, request, wavFile);
    if (!invocation) throw new CapabilityError('unsupported', `${provider} cannot write audio to a file.`);
    const result = checkRun(
      await runTool({ file, args: invocation.args, env: { ...options.env, ...invocation.env }, timeoutMs: options.timeoutMs, signal: options.signal, ...(invocation.input !== undefined ? { input: invocation.input } : {}) }),
      `${provider} speech`,
    );
    if (result.exitCode !== 0) throw new CapabilityError('failed', `${provider} failed: ${firstLine(result.stderr, `exit code ${result.exitCode ?? result.signal}`)}`);
    if (!wavFile) {
      const failure = playbackFailure(result.stderr);
      if (failure) throw new CapabilityError('unavailable', `unavailable here: no audio output for ${provider} (${failure}); ask for the audio instead (returnAudio).`);
      return { durationMs: result.durationMs };
    }
    const wav = await readFile(wavFile);
    return { durationMs: wavDurationMs(wav) ?? result.durationMs, wav };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}
