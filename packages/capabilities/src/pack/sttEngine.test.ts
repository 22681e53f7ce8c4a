import { describe, expect, it } from 'vitest';
import {
  buildJsgf,
  defaultMicrophone,
  endOfSpeechFilter,
  ffmpegConvertArgs,
  fileInputArgs,
  microphoneInputArgs,
  normalizeSttLanguage,
  parseDshowAudioDevices,
  parsePocketsphinxOutput,
  phraseWords,
  pocketsphinxArgs,
  pocketsphinxModel,
  speechEnded,
} from './sttEngine.js';

/** Recorded `pocketsphinx_continuous -time yes` output: grammar run over two utterances. */
const RECORDED_JSGF = `please open the door
please 0.000 0.280 1.000000
open 0.290 0.590 1.000000
the 0.600 0.740 1.000000
door 0.750 1.070 1.000000
<sil> 1.080 1.570 1.000000
hello world
<sil> 2.800 2.900 1.000000
hello 2.910 3.190 1.000000
world 3.200 3.620 1.000000
<sil> 3.630 3.940 1.000000
`;

/** Recorded open-vocabulary output (sentence markers, alternative pronunciations). */
const RECORDED_LM = `please open the door
<s> 0.000 0.040 0.999900
please 0.050 0.280 0.009939
open 0.290 0.590 0.202122
the(2) 0.600 0.740 0.161039
door 0.750 1.080 0.067413
</s> 1.090 1.570 1.000000
`;

describe('pocketsphinx', () => {
  it('parses utterances with their times, dropping silences and markers', () => {
    expect(parsePocketsphinxOutput(RECORDED_JSGF)).toEqual([
      { text: 'please open the door', startMs: 0, endMs: 1070 },
      { text: 'hello world', startMs: 2910, endMs: 3620 },
    ]);
    expect(parsePocketsphinxOutput(RECORDED_LM)).toEqual([{ text: 'please open the door', startMs: 50, endMs: 1080 }]);
    expect(parsePocketsphinxOutput('')).toEqual([]);
    expect(parsePocketsphinxOutput('hello world\n')).toEqual([{ text: 'hello world', startMs: 0, endMs: 0 }]);
  });

  it('builds a JSGF grammar of the phrases, normalized to dictionary words', () => {
    expect(phraseWords("Turn ON the kitchen-light, it's late!")).toEqual(['turn', 'on', 'the', 'kitchen', 'light', "it's", 'late']);
    expect(buildJsgf(['Hello, world', 'stop', 'hello world'])).toBe('#JSGF V1.0;\ngrammar capnode;\npublic <phrase> = hello world | stop;\n');
    // Grammar syntax in a phrase is just words.
    expect(buildJsgf(['a | <b> ; public'])).toBe('#JSGF V1.0;\ngrammar capnode;\npublic <phrase> = a b public;\n');
    expect(() => buildJsgf(['!!!'])).toThrow(/no words/);
  });

  it('runs on a file with the model, a grammar or the language model, word times, no log', () => {
    const model = pocketsphinxModel('/m');
    expect(model).toEqual({ hmm: '/m/en-us', lm: '/m/en-us.lm.bin', dict: '/m/cmudict-en-us.dict' });
    expect(pocketsphinxArgs({ wav: '/t/a.wav', model, jsgf: '/t/g.gram', platform: 'linux' })).toEqual([
      '-infile', '/t/a.wav', '-hmm', '/m/en-us', '-dict', '/m/cmudict-en-us.dict', '-jsgf', '/t/g.gram', '-time', 'yes', '-logfn', '/dev/null',
    ]);
    expect(pocketsphinxArgs({ wav: 'C:\\a.wav', model, platform: 'win32' })).toContain('NUL');
    expect(pocketsphinxArgs({ wav: '/a.wav', model })).toContain('/m/en-us.lm.bin');
  });

  it('knows only US English', () => {
    expect([undefined, 'en', 'en-US', 'en_us', 'auto'].map(normalizeSttLanguage)).toEqual(['en-US', 'en-US', 'en-US', 'en-US', 'en-US']);
    expect(normalizeSttLanguage('fr-FR')).toBeUndefined();
    expect(normalizeSttLanguage('en-GB')).toBeUndefined();
  });
});

describe('ffmpeg for speech', () => {
  it('converts to 16 kHz mono 16-bit WAV, at most maxDurationMs, reading files through file:', () => {
    expect(fileInputArgs('/x/concat:a|b')).toEqual(['-i', 'file:/x/concat:a|b']);
    expect(ffmpegConvertArgs({ input: fileInputArgs('/a.mp3'), output: '/t/o.wav', maxDurationMs: 30_000 })).toEqual([
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-i', 'file:/a.mp3', '-t', '30.000', '-vn', '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', '-f', 'wav', '-y', '/t/o.wav',
    ]);
  });

  it('records the platform’s default microphone', () => {
    expect(microphoneInputArgs(defaultMicrophone('linux')!)).toEqual(['-f', 'pulse', '-i', 'default']);
    expect(microphoneInputArgs(defaultMicrophone('darwin')!)).toEqual(['-f', 'avfoundation', '-i', ':0']);
    expect(microphoneInputArgs(defaultMicrophone('win32', 'Microphone (Realtek Audio)')!)).toEqual(['-f', 'dshow', '-i', 'audio=Microphone (Realtek Audio)']);
    expect(defaultMicrophone('win32')).toBeUndefined();
  });

  it('parses DirectShow device listings, old and new style', () => {
    const old = `[dshow @ 0000] DirectShow video devices (some may be both video and audio devices)
[dshow @ 0000]  "Integrated Camera"
[dshow @ 0000]     Alternative name "@device_pnp_\\\\?\\usb#vid"
[dshow @ 0000] DirectShow audio devices
[dshow @ 0000]  "Microphone Array (Realtek(R) Audio)"
[dshow @ 0000]     Alternative name "@device_cm_{33D9A762}"
dummy: Immediate exit requested`;
    expect(parseDshowAudioDevices(old)).toEqual(['Microphone Array (Realtek(R) Audio)']);
    const modern = `[in#0 @ 0000] "Integrated Camera" (video)
[in#0 @ 0000]   Alternative name "@device_pnp_x"
[in#0 @ 0000] "Headset Microphone (USB)" (audio)
[in#0 @ 0000]   Alternative name "@device_cm_y"`;
    expect(parseDshowAudioDevices(modern)).toEqual(['Headset Microphone (USB)']);
  });
});

describe('end of speech', () => {
  it('prints silence starts on stdout and counts only a silence after speech', () => {
    expect(endOfSpeechFilter(1500)).toBe('silencedetect=noise=-30dB:d=1.500,ametadata=mode=print:key=lavfi.silence_start:file=-:direct=1');
    expect(speechEnded('frame:0   pts:0   pts_time:0\nlavfi.silence_start=0\n')).toBe(false);
    expect(speechEnded('lavfi.silence_start=0\nframe:14 pts:28672 pts_time:1.792\nlavfi.silence_start=1.09925\n')).toBe(true);
    expect(speechEnded('')).toBe(false);
  });
});
