import { describe, expect, it } from 'vitest';
import type { PluginContext } from '@capnode/capabilities';
import { builtinPlugins, cameraPlugin, createCameraCapability, type CameraCapabilityOptions, type RecordingNotifier } from '@capnode/capabilities/pack';
import { startTestHost, tempDir } from '../support/testHost.js';
import { callRaw, decodeToRgb, failureCode, ffprobe, hasProgram, hostHasConsent, rate, startMediaHost } from './screenSupport.js';

const ready = hasProgram('ffmpeg') && hasProgram('ffprobe');

/** The virtual camera tests use: ffmpeg's test pattern, 640×480 at 30 fps, with a 440 Hz tone. */
const VIRTUAL = { id: 'virtual-test', name: 'Virtual test pattern', lavfi: 'testsrc=size=640x480:rate=30', position: 'front' as const };

function camera(options: CameraCapabilityOptions = {}) {
  return createCameraCapability({ virtualDevices: [VIRTUAL], realDevices: false, notify: false, ...options });
}

function pluginContext(settings: Record<string, unknown>): PluginContext {
  return { name: 'camera', settings, log: () => undefined, dataDir: '/tmp', configDir: '/tmp/capnode-config', signal: new AbortController().signal };
}

describe.skipIf(!ready)('camera commands from a virtual (lavfi) source', () => {
  it('builds from the plugin settings section, as the host loads the pack', async () => {
    expect(builtinPlugins.map((entry) => entry.name)).toEqual(expect.arrayContaining(['screen', 'camera']));
    const capability = await (cameraPlugin as (context: PluginContext) => Promise<unknown> | unknown)(pluginContext({ virtualDevices: [VIRTUAL], realDevices: false }));
    await using host = await startMediaHost([capability as ReturnType<typeof camera>]);
    const list = await callRaw(host, 'camera.list', {});
    expect(list.structuredContent).toEqual({ devices: [{ id: 'virtual-test', name: 'Virtual test pattern', position: 'front', deviceType: 'virtual' }] });
  });

  it('snaps a JPEG through MCP HTTP: maxWidth, tray quality 1..100, image content and canonical fields', async () => {
    await using host = await startMediaHost([camera()]);
    const result = await callRaw(host, 'camera.snap', { deviceId: 'virtual-test', maxWidth: 320, quality: 90 });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toMatchObject({ format: 'jpg', width: 320, height: 240 });
    const image = result.content.find((part) => part.type === 'image')!;
    expect(image.mimeType).toBe('image/jpeg');
    expect(image.data).toBe(result.structuredContent!.base64);
    const rgb = decodeToRgb(Buffer.from(image.data!, 'base64'), 320, 240);
    expect(rgb.length).toBe(320 * 240 * 3);

    const full = await callRaw(host, 'camera.snap', { facing: 'front', delayMs: 50 });
    expect(full.structuredContent).toMatchObject({ format: 'jpg', width: 640, height: 480 });
  });

  it('records a clip with sound whose duration ffprobe confirms, and one without sound', async () => {
    using dir = tempDir();
    const notices: string[] = [];
    const notify: RecordingNotifier = async (notice) => {
      notices.push(notice.title);
    };
    await using host = await startMediaHost([camera({ notify })]);
    const result = await callRaw(host, 'camera.clip', { deviceId: 'virtual-test', durationMs: 1500 });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toMatchObject({ format: 'mp4', durationMs: 1500, hasAudio: true });
    const probe = ffprobe(Buffer.from(result.structuredContent!.base64 as string, 'base64'), dir.path);
    expect(probe.durationS).toBeGreaterThan(1.3);
    expect(probe.durationS).toBeLessThan(1.8);
    const video = probe.streams.find((stream) => stream.codec_type === 'video')!;
    expect(video).toMatchObject({ codec_name: 'h264', width: 640, height: 480 });
    expect(rate(video.avg_frame_rate)).toBeCloseTo(30, 0);
    expect(probe.streams.some((stream) => stream.codec_type === 'audio' && stream.codec_name === 'aac')).toBe(true);
    expect(notices).toEqual(['capnode is recording with your camera']);

    // durationMs is clamped to 250..60000, not refused; includeAudio false gives a silent clip.
    const short = await callRaw(host, 'camera.clip', { durationMs: 10, includeAudio: false });
    expect(short.structuredContent).toMatchObject({ durationMs: 250, hasAudio: false });
    const shortProbe = ffprobe(Buffer.from(short.structuredContent!.base64 as string, 'base64'), dir.path);
    expect(shortProbe.streams.map((stream) => stream.codec_type)).toEqual(['video']);
  });

  it('fails an unknown deviceId (never falls back to another camera), and reports no camera as unavailable', async () => {
    await using host = await startMediaHost([camera()]);
    for (const command of ['camera.snap', 'camera.clip']) {
      const result = await callRaw(host, command, { deviceId: '/dev/video0' });
      expect(result.isError).toBe(true);
      expect(failureCode(result)).toBe('invalid_arguments');
      expect(result.content[0]!.text).toContain('No camera has deviceId "/dev/video0"');
    }
    await using empty = await startMediaHost([createCameraCapability({ virtualDevices: [], realDevices: false, notify: false })]);
    expect(failureCode(await callRaw(empty, 'camera.snap', {}))).toBe('unavailable');
  });

  it('refuses a photo over the media bound with payload_too_large and how to shrink it', async () => {
    // Noise does not compress: a 6000×6000 JPEG at the best quality is over 19.6 MB (26,148,864 bytes as base64).
    const noisy = { id: 'noisy', name: 'Noise', lavfi: 'color=c=gray:s=6000x6000,noise=alls=100:allf=t' };
    await using host = await startMediaHost([createCameraCapability({ virtualDevices: [noisy], realDevices: false, notify: false })]);
    const result = await callRaw(host, 'camera.snap', { deviceId: 'noisy', maxWidth: 8192, quality: 1 });
    expect(failureCode(result)).toBe('payload_too_large');
    expect(result.content[0]!.text).toMatch(/media limit.*pass a smaller maxWidth or a lower quality/);
    const small = await callRaw(host, 'camera.snap', { deviceId: 'noisy', maxWidth: 640, quality: 0.5 });
    expect(small.structuredContent).toMatchObject({ width: 640, height: 640 });
  }, 90_000);

  // Runs once the host has the consent hook (settings `consent`): camera is off by default.
  it.skipIf(!hostHasConsent())('refuses camera.snap and camera.clip with consent_required while the camera consent is off', async () => {
    await using host = await startTestHost({ host: { capabilities: [camera()] } });
    for (const command of ['camera.snap', 'camera.clip']) expect(failureCode(await callRaw(host, command, { deviceId: 'virtual-test' }))).toBe('consent_required');
    expect((await callRaw(host, 'camera.list', {})).isError).not.toBe(true);
  });

  it('reports unavailable (install ffmpeg) on a PATH without ffmpeg', async () => {
    const capability = camera({ env: { PATH: '/nonexistent' } });
    const snap = capability.commands.find((command) => command.name === 'camera.snap')!;
    expect(await snap.availability!({})).toEqual({ available: false, install: expect.stringMatching(/^ffmpeg/) });
    await using host = await startMediaHost([capability]);
    const result = await callRaw(host, 'camera.snap', { deviceId: 'virtual-test' });
    expect(failureCode(result)).toBe('unavailable');
    expect(result.content[0]!.text).toMatch(/^unavailable here: install ffmpeg/);
  });
});
