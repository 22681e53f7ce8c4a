import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CapabilityError } from '../errors.js';

/** Where Debian's `pocketsphinx-en-us` puts the US English model. */
export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

/** The three files of a pocketsphinx model. */
export interface PocketsphinxModel {
  /** Acoustic model directory (`-hmm`). */
  readonly hmm: string;
  /** Language model (`-lm`), used without a grammar. */
  readonly lm: string;
  /** Pronunciation dictionary (`-dict`). */
  readonly dict: string;
}

/** The model files under a model directory laid out as Debian's (`<dir>/en-us`, `<dir>/en-us.lm.bin`, `<dir>/cmudict-en-us.dict`). */
export function pocketsphinxModel(modelDir: string = DEBIAN_MODEL_DIR): PocketsphinxModel {
  return { hmm: path.join(modelDir, 'en-us'), lm: path.join(modelDir, 'en-us.lm.bin'), dict: path.join(modelDir, 'cmudict-en-us.dict') };
}

/** The language the shipped model recognizes; others are refused. */
export const STT_LANGUAGE = 'en-US';

/** `en`, `en-US`, `en_us` … → `en-US`; `undefined` for a language the model does not know. */
export function normalizeSttLanguage(language: string | undefined): string | undefined {
  if (language === undefined || language === '' || language === 'auto') return STT_LANGUAGE;
  return /^en(?:[-_](?:us|US|Us|uS))?$/.test(language) ? STT_LANGUAGE : undefined;
}

/** Phrases as lowercase words (letters, digits and apostrophes), for a grammar and its dictionary check. */
export function phraseWords(phrase: string): string[] {
  return phrase
    .toLowerCase()
    .split(/[^a-z0-9']+/)
    .filter((word) => word.length > 0);
}

/** A JSGF grammar accepting exactly one of `phrases` (recognition then returns one of them verbatim). */
export function buildJsgf(phrases: readonly string[]): string {
  const alternatives = phrases.map((phrase) => phraseWords(phrase).join(' ')).filter((phrase) => phrase.length > 0);
  if (alternatives.length === 0) throw new CapabilityError('invalid_arguments', '`phrases` has no words.');
  return `#JSGF V1.0;\ngrammar capnode;\npublic <phrase> = ${[...new Set(alternatives)].join(' | ')};\n`;
}

const dictionaryCache = new Map<string, Promise<Set<string>>>();

async function loadDictionary(dict: string): Promise<Set<string>> {
  const text = await readFile(dict, 'utf8');
  const words = new Set<string>();
  for (const line of text.split('\n')) {
    const word = line.slice(0, line.indexOf(' ')).replace(/\(\d+\)$/, '');
    if (word) words.add(word);
  }
  return words;
}

/** The words of `phrases` missing from the model's dictionary (pocketsphinx cannot recognize them). */
export async function unknownWords(phrases: readonly string[], dict: string): Promise<string[]> {
  let words = dictionaryCache.get(dict);
  if (!words) {
    words = loadDictionary(dict);
    dictionaryCache.set(dict, words);
    words.catch(() => dictionaryCache.delete(dict));
  }
  const known = await words;
  return [...new Set(phrases.flatMap(phraseWords))].filter((word) => !known.has(word));
}

/** `pocketsphinx_continuous` arguments: a 16 kHz mono WAV, the model, a grammar file or the language model, word times. */
export function pocketsphinxArgs(options: { readonly wav: string; readonly model: PocketsphinxModel; readonly jsgf?: string; readonly platform?: NodeJS.Platform }): string[] {
  const logSink = (options.platform ?? process.platform) === 'win32' ? 'NUL' : '/dev/null';
  return [
    '-infile',
    options.wav,
    '-hmm',
    options.model.hmm,
    '-dict',
    options.model.dict,
    ...(options.jsgf ? ['-jsgf', options.jsgf] : ['-lm', options.model.lm]),
    '-time',
    'yes',
    '-logfn',
    logSink,
  ];
}

/** One recognized utterance. */
export interface SttSegment {
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
}

const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?(?:e-?\d+)?)$/;
const FILLER = /^(<s>|<\/s>|<sil>|\[[A-Z_]+\]|\+\+.*\+\+)$/;

/**
 * Parses `pocketsphinx_continuous -time yes` output: per utterance a hypothesis line, then one line per
 * word (`word start end confidence`, seconds). Silences and fillers are dropped; empty utterances too.
 */
export function parsePocketsphinxOutput(stdout: string): SttSegment[] {
  const segments: SttSegment[] = [];
  let current: { text: string; start?: number; end?: number } | undefined;
  const flush = () => {
    if (current && current.text) segments.push({ text: current.text, startMs: Math.round((current.start ?? 0) * 1000), endMs: Math.round((current.end ?? current.start ?? 0) * 1000) });
    current = undefined;
  };
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const word = WORD_LINE.exec(line);
    if (word && current) {
      if (FILLER.test(word[1]!)) continue;
      const start = Number(word[2]);
      const end = Number(word[3]);
      if (current.start === undefined) current.start = start;
      current.end = end;
      continue;
    }
    flush();
    current = { text: line.replace(/\(\d+\)/g, '').replace(/\s+/g, ' ').trim() };
  }
  flush();
  return segments;
}

/** ffmpeg arguments turning any audio input into the 16 kHz mono 16-bit WAV pocketsphinx reads, at most `maxDurationMs` of it. */
export function ffmpegConvertArgs(options: { readonly input: readonly string[]; readonly output: string; readonly maxDurationMs: number; readonly filter?: string }): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...options.input,
    '-t',
    (options.maxDurationMs / 1000).toFixed(3),
    '-vn',
    ...(options.filter ? ['-af', options.filter] : []),
    '-ar',
    '16000',
    '-ac',
    '1',
    '-c:a',
    'pcm_s16le',
    '-f',
    'wav',
    '-y',
    options.output,
  ];
}

/** ffmpeg input arguments for an audio file: the `file:` protocol, so a name is never read as a URL or another protocol. */
export function fileInputArgs(file: string): string[] {
  return ['-i', `file:${file}`];
}

/** Where the microphone comes from: the platform's default device, or a configured ffmpeg input (a virtual source for tests). */
export interface MicrophoneSource {
  /** ffmpeg input format (`pulse`, `avfoundation`, `dshow`, `lavfi` for a virtual source). */
  readonly format: string;
  /** ffmpeg input (`default`, `:0`, `audio=<name>`, or a lavfi graph such as `amovie=/path/speech.wav`). */
  readonly input: string;
}

/** The default microphone: PulseAudio's `default` (Linux), AVFoundation's first audio device (macOS), a named DirectShow device (Windows). */
export function defaultMicrophone(platform: NodeJS.Platform, windowsDevice?: string): MicrophoneSource | undefined {
  if (platform === 'darwin') return { format: 'avfoundation', input: ':0' };
  if (platform === 'win32') return windowsDevice ? { format: 'dshow', input: `audio=${windowsDevice}` } : undefined;
  return { format: 'pulse', input: 'default' };
}

/** ffmpeg's DirectShow device listing (`-list_devices true -f dshow -i dummy`, on stderr) → audio device names. */
export function parseDshowAudioDevices(stderr: string): string[] {
  const names: string[] = [];
  let inAudioSection = false;
  for (const line of stderr.split('\n')) {
    if (/DirectShow audio devices/i.test(line)) inAudioSection = true;
    else if (/DirectShow video devices/i.test(line)) inAudioSection = false;
    const match = /"([^"]+)"(?:\s*\((audio|video|none)\))?\s*$/.exec(line);
    if (!match || /Alternative name/i.test(line)) continue;
    if (match[2] === 'audio' || (match[2] === undefined && inAudioSection)) names.push(match[1]!);
  }
  return names;
}

/** ffmpeg input arguments for a microphone source. */
export function microphoneInputArgs(source: MicrophoneSource): string[] {
  return ['-f', source.format, '-i', source.input];
}

/**
 * An audio filter that prints `lavfi.silence_start=<s>` on stdout whenever `silenceMs` of silence
 * (below -30 dB) begins: the end of an utterance, for listening that stops when the speaker does.
 * `direct=1`: unbuffered, so the line arrives while recording, not at its end.
 */
export function endOfSpeechFilter(silenceMs: number): string {
  return `silencedetect=noise=-30dB:d=${(silenceMs / 1000).toFixed(3)},ametadata=mode=print:key=lavfi.silence_start:file=-:direct=1`;
}

/** True once the filter's output shows silence starting after speech (a silence from the very start does not count). */
export function speechEnded(filterOutput: string): boolean {
  for (const match of filterOutput.matchAll(/lavfi\.silence_start=(-?\d+(?:\.\d+)?)/g)) if (Number(match[1]) > 0.1) return true;
  return false;
}
