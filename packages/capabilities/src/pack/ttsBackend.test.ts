import { describe, expect, it } from 'vitest';
import { ESPEAK_DEFAULT_RATE, ESPEAK_DEFAULT_VOICE, playbackFailure, sapiArgs, sapiRate, SAPI_SCRIPT, sayArgs, spdSayArgs, speechInvocation } from './ttsBackend.js';

describe('speech argument builders (text always through stdin or the environment)', () => {
  it('espeak-ng: default voice and rate that pocketsphinx recognizes, -w for a file, --stdin for the text', () => {
    expect(ESPEAK_DEFAULT_VOICE).toBe('en-us+m1');
    expect(ESPEAK_DEFAULT_RATE).toBe(175);
    expect(speechInvocation('espeak-ng', { text: '-w /etc/passwd' }, '/tmp/a.wav')).toEqual({ args: ['-v', 'en-us+m1', '-s', '175', '-w', '/tmp/a.wav', '--stdin'], input: '-w /etc/passwd' });
    expect(speechInvocation('espeak-ng', { text: 'hi', voiceId: 'en-us+klatt', rate: 190 })).toEqual({ args: ['-v', 'en-us+klatt', '-s', '190', '--stdin'], input: 'hi' });
  });

  it('spd-say: playback only (no file), waits, stdin, rate mapped to -100..100', () => {
    expect(speechInvocation('speech-dispatcher', { text: 'hi' }, '/tmp/a.wav')).toBeUndefined();
    expect(spdSayArgs({ text: 'hi', rate: 450, voiceId: 'male1' })).toEqual({ args: ['-w', '-e', '-r', '100', '-y', 'male1'], input: 'hi' });
    expect(spdSayArgs({ text: 'hi', rate: 180 }).args).toEqual(['-w', '-e', '-r', '0']);
  });

  it('macOS say: voice, rate, a 16-bit WAV file, text from stdin', () => {
    expect(sayArgs({ text: 'hi', voiceId: 'Samantha', rate: 200 }, '/tmp/a.wav')).toEqual({
      args: ['-v', 'Samantha', '-r', '200', '-o', '/tmp/a.wav', '--file-format=WAVE', '--data-format=LEI16@22050', '-f', '-'],
      input: 'hi',
    });
    expect(sayArgs({ text: 'hi' })).toEqual({ args: ['-f', '-'], input: 'hi' });
  });

  it('Windows SAPI: an encoded script, text/voice/rate/file in the environment', () => {
    const invocation = sapiArgs({ text: "'; Remove-Item C:\\ #", voiceId: 'Microsoft Zira Desktop', rate: 260 }, 'C:\\t\\a.wav');
    expect(invocation.args.slice(0, -1)).toEqual(['-NoProfile', '-NonInteractive', '-Sta', '-ExecutionPolicy', 'Bypass', '-EncodedCommand']);
    expect(Buffer.from(invocation.args.at(-1)!, 'base64').toString('utf16le')).toBe(SAPI_SCRIPT);
    expect(invocation.env).toEqual({ CAPNODE_TTS_TEXT: "'; Remove-Item C:\\ #", CAPNODE_TTS_VOICE: 'Microsoft Zira Desktop', CAPNODE_TTS_RATE: '4', CAPNODE_TTS_FILE: 'C:\\t\\a.wav' });
    expect([sapiRate(80), sapiRate(180), sapiRate(450)]).toEqual([-5, 0, 10]);
  });

  it('recognizes ALSA’s missing-device report (espeak-ng still exits 0)', () => {
    expect(playbackFailure('ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default\nerror: No such file or directory\n')).toMatch(/ALSA lib/);
    expect(playbackFailure('')).toBeUndefined();
  });
});
