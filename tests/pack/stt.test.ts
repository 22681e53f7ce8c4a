import { execFile, execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInvoker, createRegistry, type CommandResult } from '@capnode/capabilities';
import { findExecutable } from '@capnode/capabilities/node';
import { createSttCapability, createTtsCapability, MAX_TRANSCRIBE_MS } from '@capnode/capabilities/pack';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackHost } from '../support/packHost.js';
import { startTestPulse } from '../support/pulse.js';
import { tempDir } from '../support/testHost.js';

const execFileAsync = promisify(execFile);

const ready = process.platform === 'linux' && (await findExecutable('espeak-ng')) && (await findExecutable('pocketsphinx_continuous')) && (await findExecutable('ffmpeg'));

/** The audio duration a successful stt result reports. */
function durationOf(result: CommandResult): number {
  if (!result.ok) throw new Error(result.error.message);
  return result.structured?.durationMs as number;
}

/** Phrases spoken with espeak-ng's default here (en-us+m1 at 175 wpm) and recognized with a grammar of them all. */
const PHRASES = ['please open the door', 'turn on the kitchen light', 'what time is it', 'the weather is nice today', 'hello world'];

describe.runIf(ready)('stt over MCP (pocketsphinx, offline)', () => {
  const dir = tempDir('capnode-stt-');
  const audioDir = path.join(dir.path, 'audio');
  // phrase-0.wav exists before any test, so each test also runs alone (`-t`); the round trip rewrites it through tts.speak.
  beforeAll(async () => {
    await mkdir(audioDir);
    await execFileAsync('espeak-ng', ['-v', 'en-us+m1', '-s', '175', '-w', path.join(audioDir, 'phrase-0.wav'), PHRASES[0]!]);
  });
  afterAll(() => dir[Symbol.dispose]());

  /** Speaks `text` through tts.speak (returned audio) and saves it as a WAV. */
  async function speakToFile(host: Awaited<ReturnType<typeof startPackHost>>, text: string, name: string): Promise<string> {
    const result = (await host.client.callTool({ name: 'tts.speak', arguments: { text, returnAudio: true } })) as { content: { type: string; data?: string }[] };
    const audio = result.content.find((part) => part.type === 'audio');
    const file = path.join(audioDir, name);
    await writeFile(file, Buffer.from(audio!.data!, 'base64'));
    return file;
  }

  it('round trip: tts.speak to a WAV, then stt.transcribe of it gives back the words (grammar of phrases)', async () => {
    await using host = await startPackHost([createTtsCapability(), createSttCapability()]);
    for (const [index, phrase] of PHRASES.entries()) {
      const file = await speakToFile(host, phrase, `phrase-${index}.wav`);
      const started = performance.now();
      const result = await host.call('stt.transcribe', { inputPath: file, phrases: PHRASES });
      const elapsed = Math.round(performance.now() - started);
      expect(result.isError, result.text).toBe(false);
      expect(result.structured).toMatchObject({ transcribed: true, text: phrase, language: 'en-US', engineEffective: 'pocketsphinx-jsgf', source: 'file' });
      expect(result.structured?.durationMs).toBeGreaterThan(500);
      console.info(`stt round trip "${phrase}": transcribe ${elapsed} ms for ${String(result.structured?.durationMs)} ms of audio`);
    }
  });

  it('open vocabulary hears "hello world" from the default voice', async () => {
    await using host = await startPackHost([createTtsCapability(), createSttCapability()]);
    const file = await speakToFile(host, 'hello world', 'open.wav');
    const result = await host.call('stt.transcribe', { inputPath: file, maxDurationMs: 5000 });
    expect(result.structured).toMatchObject({ transcribed: true, text: 'hello world', engineEffective: 'pocketsphinx' });
  });

  it('stt.listen records the (virtual) microphone and returns utterances as segments', async () => {
    await using speaker = await startPackHost([createTtsCapability()]);
    const first = await speakToFile(speaker, 'please open the door', 'listen-1.wav');
    const second = await speakToFile(speaker, 'hello world', 'listen-2.wav');
    // A microphone stand-in: two utterances with a second and a half of silence between them.
    const graph = `amovie=${first}[a];anullsrc=r=22050:cl=mono,atrim=duration=1.5[s];amovie=${second}[b];[a][s][b]concat=n=3:v=0:a=1`;
    const stt = createSttCapability({ microphone: { format: 'lavfi', input: graph } });
    await using host = await startPackHost([stt]);
    // endSilenceMs above the pause, so listening goes on to the second utterance.
    const result = await host.call('stt.listen', { timeoutMs: 10_000, endSilenceMs: 4000, phrases: PHRASES });
    expect(result.isError, result.text).toBe(false);
    expect(result.structured).toMatchObject({ transcribed: true, text: 'please open the door hello world', source: 'microphone', language: 'en-US' });
    const segments = result.structured?.segments as { text: string; startMs: number; endMs: number }[];
    expect(segments.map((segment) => segment.text)).toEqual(['please open the door', 'hello world']);
    expect(segments[1]!.startMs).toBeGreaterThan(segments[0]!.endMs);
  });

  it('stt.listen stops when the speaker has been silent for endSilenceMs after speaking', async () => {
    const file = path.join(audioDir, 'listen-1.wav');
    // Half a second of silence, the phrase, then twenty seconds of silence, at the pace of a real microphone.
    const graph = `anullsrc=r=22050:cl=mono,atrim=duration=0.5[a];amovie=${file}[b];anullsrc=r=22050:cl=mono,atrim=duration=20[c];[a][b][c]concat=n=3:v=0:a=1`;
    const realtime = createSttCapability({ microphone: { format: 'lavfi', input: `${graph},arealtime` } });
    const fast = createSttCapability({ microphone: { format: 'lavfi', input: graph } });
    const invoker = createInvoker({ registry: createRegistry([realtime]) });
    const outcome = await invoker.invoke({ command: 'stt.listen', args: { timeoutMs: 30_000, endSilenceMs: 1000, phrases: PHRASES }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: true, structured: { text: 'please open the door' } });
    // Stopped about a second into the trailing silence, not after 21 s of audio.
    expect(durationOf(outcome.result)).toBeLessThan(8000);
    const all = await createInvoker({ registry: createRegistry([fast]) }).invoke({ command: 'stt.listen', args: { timeoutMs: 8000, endSilenceMs: 0, phrases: PHRASES }, transport: 'internal' });
    expect(durationOf(all.result)).toBeGreaterThan(7500);
  });

  it('transcribe without inputPath records the microphone for at most maxDurationMs', async () => {
    const file = path.join(audioDir, 'phrase-0.wav');
    const notices: string[] = [];
    const stt = createSttCapability({ microphone: { format: 'lavfi', input: `amovie=${file}` }, notify: async (notice) => void notices.push(notice.title) });
    await using host = await startPackHost([stt]);
    const result = await host.call('stt.transcribe', { maxDurationMs: 700, phrases: PHRASES });
    expect(result.isError, result.text).toBe(false);
    expect(result.structured).toMatchObject({ source: 'microphone' });
    // The user is told while the microphone records; a file input records nothing and says nothing.
    expect(notices).toEqual(['capnode is listening to your microphone']);
    expect((await host.call('stt.transcribe', { inputPath: file, phrases: PHRASES })).isError).toBe(false);
    expect(notices).toHaveLength(1);
    expect(result.structured?.durationMs).toBeLessThanOrEqual(720);
  });

  it('holds the limits: maxDurationMs ≤ 30000, listen timeoutMs 1000..120000', async () => {
    await using host = await startPackHost([createSttCapability()]);
    expect(MAX_TRANSCRIBE_MS).toBe(30_000);
    const file = path.join(audioDir, 'phrase-0.wav');
    expect(await host.call('stt.transcribe', { inputPath: file, maxDurationMs: 30_001 })).toMatchObject({ isError: true, text: expect.stringMatching(/maxDurationMs/) });
    expect((await host.call('stt.transcribe', { inputPath: file, maxDurationMs: 30_000, phrases: PHRASES })).isError).toBe(false);
    expect(await host.call('stt.listen', { timeoutMs: 999 })).toMatchObject({ isError: true, text: expect.stringMatching(/timeoutMs/) });
    expect(await host.call('stt.listen', { timeoutMs: 120_001 })).toMatchObject({ isError: true, text: expect.stringMatching(/timeoutMs/) });
    expect(await host.call('stt.listen', { endSilenceMs: 10_001 })).toMatchObject({ isError: true, text: expect.stringMatching(/endSilenceMs/) });
  });

  it('refuses an inputPath that is a live stream (a FIFO, a device, a link to one) or holds a NUL', async () => {
    await using host = await startPackHost([createSttCapability()]);
    const fifo = path.join(dir.path, 'live.fifo');
    execFileSync('mkfifo', [fifo]);
    const link = path.join(dir.path, 'live.wav');
    await symlink(fifo, link);
    for (const inputPath of [fifo, link, '/dev/zero']) {
      expect(await host.call('stt.transcribe', { inputPath })).toMatchObject({ isError: true, text: expect.stringMatching(/not a regular file/) });
    }
    expect(await host.call('stt.transcribe', { inputPath: `${audioDir}/x\0.wav` })).toMatchObject({ isError: true, text: expect.stringMatching(/absolute path/) });
  });

  it('refuses bad input clearly: language, paths, non-audio, unknown words', async () => {
    await using host = await startPackHost([createSttCapability()]);
    const file = path.join(audioDir, 'phrase-0.wav');
    expect(await host.call('stt.transcribe', { inputPath: file, language: 'fr-FR' })).toMatchObject({ isError: true, text: expect.stringMatching(/only en-US/) });
    expect(await host.call('stt.transcribe', { inputPath: 'audio/phrase-0.wav' })).toMatchObject({ isError: true, text: expect.stringMatching(/absolute path/) });
    expect(await host.call('stt.transcribe', { inputPath: audioDir })).toMatchObject({ isError: true, text: expect.stringMatching(/not a regular file/) });
    expect(await host.call('stt.transcribe', { inputPath: path.join(audioDir, 'missing.wav') })).toMatchObject({ isError: true, text: expect.stringMatching(/does not exist/) });
    const notAudio = path.join(dir.path, 'notes.txt');
    await writeFile(notAudio, 'not audio at all\n');
    expect(await host.call('stt.transcribe', { inputPath: notAudio })).toMatchObject({ isError: true, text: expect.stringMatching(/not audio ffmpeg can read/) });
    expect(await host.call('stt.transcribe', { inputPath: file, phrases: ['open the qzxv door'] })).toMatchObject({ isError: true, text: expect.stringMatching(/words the model does not know: qzxv/) });
    // A name that looks like another ffmpeg protocol is still a local file name.
    expect(await host.call('stt.transcribe', { inputPath: '/concat:/etc/passwd|/etc/hosts' })).toMatchObject({ isError: true, text: expect.stringMatching(/does not exist/) });
  });

  it('declares microphone consent on the recognizing commands and reports status', async () => {
    const stt = createSttCapability();
    expect(Object.fromEntries(stt.commands.map((command) => [command.name, command.consent]))).toEqual({ 'stt.transcribe': 'microphone', 'stt.listen': 'microphone', 'stt.status': undefined });
    await using host = await startPackHost([stt]);
    expect((await host.call('stt.status', {})).structured).toMatchObject({ ready: true, engines: [expect.objectContaining({ name: 'pocketsphinx', available: true, languages: ['en-US'] })] });
  });

  it('cancellation stops a recording', async () => {
    const stt = createSttCapability({ microphone: { format: 'lavfi', input: 'sine=frequency=440:sample_rate=16000,arealtime' } });
    const controller = new AbortController();
    const started = performance.now();
    const outcome = createInvoker({ registry: createRegistry([stt]) }).invoke({ command: 'stt.listen', args: { timeoutMs: 60_000 }, transport: 'internal' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 500);
    expect((await outcome).result).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});

const hasPulse = ready && (await findExecutable('pulseaudio')) && (await findExecutable('paplay')) && (await findExecutable('pactl'));

/** The real default-microphone path: ffmpeg `-f pulse -i default`, the source being a null sink's monitor. */
describe.runIf(hasPulse)('stt from the default microphone (PulseAudio null sink)', () => {
  const dir = tempDir('capnode-stt-pulse-');
  afterAll(() => dir[Symbol.dispose]());

  it('stt.transcribe records the default microphone while a phrase is played into it', async () => {
    await using pulse = await startTestPulse();
    const env = { ...process.env, ...pulse.env };
    await using host = await startPackHost([createTtsCapability(), createSttCapability({ env })]);
    const spoken = (await host.client.callTool({ name: 'tts.speak', arguments: { text: 'turn on the kitchen light', returnAudio: true } })) as { content: { type: string; data?: string }[] };
    const file = path.join(dir.path, 'kitchen.wav');
    await writeFile(file, Buffer.from(spoken.content.find((part) => part.type === 'audio')!.data!, 'base64'));
    const call = host.call('stt.transcribe', { maxDurationMs: 4000, phrases: PHRASES });
    await pulse.recording();
    await pulse.play(file);
    const result = await call;
    expect(result.isError, result.text).toBe(false);
    expect(result.structured).toMatchObject({ transcribed: true, text: 'turn on the kitchen light', source: 'microphone' });
  });

  it('stt.listen hears tts.speak playing aloud (speaker into microphone)', async () => {
    await using pulse = await startTestPulse();
    const env = { ...process.env, ...pulse.env };
    await using host = await startPackHost([createTtsCapability({ env }), createSttCapability({ env })]);
    const listening = host.call('stt.listen', { timeoutMs: 5000, phrases: PHRASES });
    await pulse.recording();
    const spoken = await host.call('tts.speak', { text: 'what time is it' });
    expect(spoken.structured).toMatchObject({ spoken: true, provider: 'espeak-ng', contentType: 'audio/x-device-playback' });
    const heard = await listening;
    expect(heard.isError, heard.text).toBe(false);
    expect(heard.structured).toMatchObject({ text: 'what time is it', source: 'microphone' });
    expect(heard.structured?.segments).toEqual([expect.objectContaining({ text: 'what time is it' })]);
  });

  it('fails unavailable, naming the microphone, when no sound server runs', async () => {
    const stt = createSttCapability({ env: { ...process.env, PULSE_SERVER: `unix:${path.join(dir.path, 'no-such-socket')}` } });
    const outcome = await createInvoker({ registry: createRegistry([stt]) }).invoke({ command: 'stt.transcribe', args: { maxDurationMs: 1000 }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/the microphone \(pulse default\) cannot be recorded/) } });
  });
});

describe('stt availability', () => {
  it('is unavailable with an install hint without pocketsphinx or its model', async () => {
    const stt = createSttCapability({ env: { PATH: '/nonexistent' } });
    expect(await stt.commands[0]!.availability!({})).toEqual({ available: false, install: expect.stringMatching(/pocketsphinx-en-us/) });
    const noModel = createSttCapability({ modelDir: '/nonexistent/model' });
    expect(await noModel.commands[0]!.availability!({})).toEqual({ available: false, install: expect.stringMatching(/pocketsphinx/) });
  });
});
