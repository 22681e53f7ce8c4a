import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { findExecutable } from '@capnode/capabilities/node';
import { createTtsCapability } from '@capnode/capabilities/pack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackHost } from '../support/packHost.js';
import { eventually, isAlive } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';

const espeak = await findExecutable('espeak-ng');

describe.runIf(espeak && process.platform === 'linux')('tts over MCP (espeak-ng)', () => {
  const dir = tempDir('capnode-tts-');
  afterAll(() => dir[Symbol.dispose]());

  it('reports espeak-ng ready in tts.status', async () => {
    await using host = await startPackHost([createTtsCapability()]);
    const status = await host.call('tts.status', {});
    expect(status.isError).toBe(false);
    expect(status.structured).toMatchObject({ ready: true, defaultProvider: 'espeak-ng', providers: expect.arrayContaining([expect.objectContaining({ name: 'espeak-ng', available: true, canWriteFile: true })]) });
  });

  it('returns the speech as WAV audio content with OpenClaw result fields', async () => {
    await using host = await startPackHost([createTtsCapability()]);
    const result = (await host.client.callTool({ name: 'tts.speak', arguments: { text: 'hello world', returnAudio: true } })) as {
      content: { type: string; data?: string; mimeType?: string }[];
      structuredContent: Record<string, unknown>;
    };
    expect(result.structuredContent).toMatchObject({ spoken: true, provider: 'espeak-ng', requestedProvider: 'auto', fellBack: false, contentType: 'audio/wav' });
    expect(result.structuredContent.durationMs).toBeGreaterThan(300);
    const audio = result.content.find((part) => part.type === 'audio');
    expect(audio?.mimeType).toBe('audio/wav');
    const wav = Buffer.from(audio!.data!, 'base64');
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
  });

  it('falls back from a provider that does not exist here, and says so', async () => {
    await using host = await startPackHost([createTtsCapability()]);
    const result = await host.call('tts.speak', { text: 'hi', provider: 'elevenlabs', voiceId: 'en-us', returnAudio: true });
    expect(result.structured).toMatchObject({ spoken: true, provider: 'espeak-ng', requestedProvider: 'elevenlabs', fellBack: true });
    expect((await host.call('tts.speak', { text: 'hi', provider: 'espeak', returnAudio: true })).structured).toMatchObject({ provider: 'espeak-ng', requestedProvider: 'espeak', fellBack: false });
    expect((await host.call('tts.speak', { text: 'hi', provider: 'system', returnAudio: true })).structured).toMatchObject({ provider: 'espeak-ng', fellBack: false });
    // speech-dispatcher cannot write audio: asking it for audio falls back to espeak-ng.
    expect((await host.call('tts.speak', { text: 'hi', provider: 'speech-dispatcher', returnAudio: true })).structured).toMatchObject({ provider: 'espeak-ng', fellBack: true });
  });

  it('writes outputPath only as a new .wav file inside the configured output directory', async () => {
    const outDir = path.join(dir.path, 'out');
    await mkdir(outDir);
    await using host = await startPackHost([createTtsCapability({ outputDir: outDir })]);
    const target = path.join(outDir, 'speech.wav');
    const written = await host.call('tts.speak', { text: 'please open the door', outputPath: target });
    expect(written.isError).toBe(false);
    expect(written.structured).toMatchObject({ spoken: true, contentType: 'audio/wav', outputPath: target });
    expect((await readFile(target)).toString('latin1', 0, 4)).toBe('RIFF');
    const again = await host.call('tts.speak', { text: 'again', outputPath: target });
    expect(again).toMatchObject({ isError: true, text: expect.stringMatching(/exists already/) });
    const outside = await host.call('tts.speak', { text: 'x', outputPath: path.join(dir.path, 'escape.wav') });
    expect(outside).toMatchObject({ isError: true, text: expect.stringMatching(/inside the configured output directory/) });
    const dotdot = await host.call('tts.speak', { text: 'x', outputPath: `${outDir}/../escape.wav` });
    expect(dotdot.isError).toBe(true);
    const relative = await host.call('tts.speak', { text: 'x', outputPath: 'speech2.wav' });
    expect(relative).toMatchObject({ isError: true, text: expect.stringMatching(/absolute path ending in \.wav/) });
  });

  it('refuses an outputPath that leaves the output directory through a link, or whose name is a link', async () => {
    const outDir = path.join(dir.path, 'out-links');
    const outside = path.join(dir.path, 'outside');
    await mkdir(outDir);
    await mkdir(outside);
    await symlink(outside, path.join(outDir, 'sub'));
    await using host = await startPackHost([createTtsCapability({ outputDir: outDir })]);
    expect(await host.call('tts.speak', { text: 'x', outputPath: path.join(outDir, 'sub', 'a.wav') })).toMatchObject({ isError: true, text: expect.stringMatching(/inside the configured output directory/) });
    // A dangling link named as the new file is not followed: the file must be new.
    await symlink(path.join(outside, 'b.wav'), path.join(outDir, 'b.wav'));
    expect(await host.call('tts.speak', { text: 'x', outputPath: path.join(outDir, 'b.wav') })).toMatchObject({ isError: true, text: expect.stringMatching(/exists already/) });
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses outputPath without a configured output directory, and odd voice names', async () => {
    await using host = await startPackHost([createTtsCapability()]);
    expect(await host.call('tts.speak', { text: 'x', outputPath: path.join(dir.path, 'a.wav') })).toMatchObject({ isError: true, text: expect.stringMatching(/no output directory is configured/) });
    expect((await host.call('tts.speak', { text: 'x', voiceId: '--path=/etc', returnAudio: true })).isError).toBe(true);
    expect((await host.call('tts.speak', { text: 'x', voiceId: '--stdout', returnAudio: true })).isError).toBe(true);
    expect((await host.call('tts.speak', { text: '' })).isError).toBe(true);
  });

  it('speaks text that looks like an option (it goes through stdin, not argv)', async () => {
    await using host = await startPackHost([createTtsCapability()]);
    const result = await host.call('tts.speak', { text: '--help -w /tmp/x', returnAudio: true });
    expect(result.structured).toMatchObject({ spoken: true });
    expect(result.structured?.durationMs).toBeGreaterThan(300);
  });
});

describe.runIf(process.platform === 'linux')('tts with a stand-in speaker (process lifetime)', () => {
  const dir = tempDir('capnode-tts-fake-');
  const bin = path.join(dir.path, 'bin');
  const pidFile = path.join(dir.path, 'pid');
  beforeAll(async () => {
    await mkdir(bin);
    // Reads the text; "long" texts keep speaking (sleep) until killed; "mute" ones report ALSA's missing device and exit 0 as espeak-ng does.
    await writeFile(
      path.join(bin, 'espeak-ng'),
      `#!/bin/sh\necho $$ > "${pidFile}"\ntext=$(/bin/cat)\ncase "$text" in\n  *long*) exec /bin/sleep 60 ;;\n  *mute*) echo "ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default" >&2; echo "error: No such file or directory" >&2 ;;\nesac\nexit 0\n`,
    );
    await chmod(path.join(bin, 'espeak-ng'), 0o755);
  });
  afterAll(() => dir[Symbol.dispose]());
  const invoker = () => createInvoker({ registry: createRegistry([createTtsCapability({ env: { PATH: bin } })]) });

  it('kills the speaker when the call is cancelled', async () => {
    const controller = new AbortController();
    const outcome = invoker().invoke({ command: 'tts.speak', args: { text: 'a long speech' }, transport: 'internal' }, { signal: controller.signal });
    const pid = Number(await eventually(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim(), { what: 'the speaker pid' }));
    controller.abort();
    expect((await outcome).result).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    await eventually(() => !isAlive(pid), { what: 'the speaker to be killed' });
  });

  it('interrupt stops what plays and speaks the new text', async () => {
    const inv = invoker();
    const first = inv.invoke({ command: 'tts.speak', args: { text: 'a long speech' }, transport: 'internal' });
    const pid = Number(await eventually(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim(), { what: 'the first speaker' }));
    const second = await inv.invoke({ command: 'tts.speak', args: { text: 'short', interrupt: true }, transport: 'internal' });
    expect(second.result).toMatchObject({ ok: true, structured: { spoken: true, provider: 'espeak-ng' } });
    expect((await first).result).toMatchObject({ ok: true, structured: { spoken: false, interrupted: true } });
    await eventually(() => !isAlive(pid), { what: 'the interrupted speaker to be killed' });
  });

  it('fails unavailable (not a silent success) when there is no audio output', async () => {
    const outcome = await invoker().invoke({ command: 'tts.speak', args: { text: 'mute please' }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/no audio output/) } });
  });

  it('is unavailable with an install hint when no provider exists', async () => {
    const capability = createTtsCapability({ env: { PATH: path.join(dir.path, 'empty') } });
    const speak = capability.commands.find((command) => command.name === 'tts.speak')!;
    expect(await speak.availability!({})).toEqual({ available: false, install: expect.stringMatching(/espeak-ng/) });
    const outcome = await createInvoker({ registry: createRegistry([capability]) }).invoke({ command: 'tts.speak', args: { text: 'x', returnAudio: true }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/^unavailable here: install espeak-ng/) } });
  });
});
