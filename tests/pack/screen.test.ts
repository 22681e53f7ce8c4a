import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { createScreenCapability, MAX_SCREEN_RECORD_MS, type RecordingNotifier } from '@capnode/capabilities/pack';
import { eventually } from '../support/poll.js';
import { startTestHost, tempDir } from '../support/testHost.js';
import { hasXvfb, startXvfb, type Xvfb } from '../support/xvfb.js';
import { callRaw, decodeToRgb, failureCode, ffprobe, hasProgram, hostHasConsent, processesMatching, rate, startMediaHost } from './screenSupport.js';

const ready = hasXvfb() && hasProgram('ffmpeg') && hasProgram('ffprobe');
const PAINT = '#ff8000';

function pixel(rgb: Buffer, width: number, x: number, y: number): [number, number, number] {
  const at = (y * width + x) * 3;
  return [rgb[at]!, rgb[at + 1]!, rgb[at + 2]!];
}

describe.skipIf(!ready)('screen commands on a real Xvfb display', () => {
  let xvfb: Xvfb;
  const notices: { title: string; body: string }[] = [];
  const notify: RecordingNotifier = async (notice) => {
    notices.push(notice);
  };

  beforeAll(async () => {
    xvfb = await startXvfb({ width: 1920, height: 1080 });
    xvfb.paint(PAINT);
  });
  afterAll(async () => {
    await xvfb?.close();
  });

  const capability = () => createScreenCapability({ env: xvfb.env, notify });

  it('takes a PNG of the known screen through the registry and invoker directly', async () => {
    const registry = createRegistry();
    registry.register(capability());
    const invoker = createInvoker({ registry });
    const outcome = await invoker.invoke({ command: 'screen.snapshot', args: {}, transport: 'internal' });
    expect(outcome.result.ok).toBe(true);
    if (!outcome.result.ok) return;
    expect(outcome.result.structured).toMatchObject({ format: 'png', width: 1920, height: 1080, screenIndex: 0 });
  });

  it('lists the screen and takes a PNG through MCP HTTP: size, colour, pointer left out, image content and JSON fields', async () => {
    await using host = await startMediaHost([capability()]);
    const list = await callRaw(host, 'screen.list', {});
    expect(list.structuredContent).toEqual({ screens: [expect.objectContaining({ index: 0, x: 0, y: 0, width: 1920, height: 1080 })] });

    const before = Date.now();
    const shot = await callRaw(host, 'screen.snapshot', { format: 'png' });
    expect(shot.isError).not.toBe(true);
    const fields = shot.structuredContent!;
    expect(fields).toMatchObject({ format: 'png', width: 1920, height: 1080, screenIndex: 0 });
    expect(fields.capturedAtMs as number).toBeGreaterThanOrEqual(before);
    const image = shot.content.find((part) => part.type === 'image')!;
    expect(image.mimeType).toBe('image/png');
    expect(image.data).toBe(fields.base64);
    const png = Buffer.from(image.data!, 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    const rgb = decodeToRgb(png, 1920, 1080);
    expect(rgb.length).toBe(1920 * 1080 * 3);
    // Xvfb keeps its pointer at the centre: without includePointer it is not in the picture.
    for (const [x, y] of [[0, 0], [1919, 1079], [960, 540], [955, 535]] as const) expect(pixel(rgb, 1920, x, y)).toEqual([255, 128, 0]);
    const text = shot.content.find((part) => part.type === 'text')!.text!;
    expect(text).not.toContain(image.data!.slice(0, 100));
  });

  it('draws the pointer when includePointer is set (tray alias monitor accepted)', async () => {
    await using host = await startMediaHost([capability()]);
    const shot = await callRaw(host, 'screen.snapshot', { monitor: 0, includePointer: true });
    const rgb = decodeToRgb(Buffer.from(shot.structuredContent!.base64 as string, 'base64'), 1920, 1080);
    let changed = 0;
    for (let y = 530; y < 550; y++) for (let x = 950; x < 970; x++) if (pixel(rgb, 1920, x, y).join() !== '255,128,0') changed++;
    expect(changed).toBeGreaterThan(10);
    expect(pixel(rgb, 1920, 0, 0)).toEqual([255, 128, 0]);
  });

  it('honours maxWidth (aspect kept) and encodes JPEG with a quality', async () => {
    await using host = await startMediaHost([capability()]);
    const small = await callRaw(host, 'screen.snapshot', { maxWidth: 640 });
    expect(small.structuredContent).toMatchObject({ format: 'png', width: 640, height: 360 });
    const smallRgb = decodeToRgb(Buffer.from(small.structuredContent!.base64 as string, 'base64'), 640, 360);
    expect(pixel(smallRgb, 640, 320, 180)).toEqual([255, 128, 0]);

    const jpeg = await callRaw(host, 'screen.snapshot', { format: 'jpeg', quality: 80, maxWidth: 1280 });
    expect(jpeg.structuredContent).toMatchObject({ format: 'jpeg', width: 1280, height: 720 });
    const image = jpeg.content.find((part) => part.type === 'image')!;
    expect(image.mimeType).toBe('image/jpeg');
    const data = Buffer.from(image.data!, 'base64');
    expect([data[0], data[1]]).toEqual([0xff, 0xd8]);
    const [r, g, b] = pixel(decodeToRgb(data, 1280, 720), 1280, 640, 360);
    expect(Math.abs(r - 255) + Math.abs(g - 128) + Math.abs(b - 0)).toBeLessThan(24);
  });

  // Runs once the host has the consent hook (settings `consent`): screen is off by default, from every transport.
  it.skipIf(!hostHasConsent())('refuses screen commands with consent_required while the screen consent is off (the default)', async () => {
    await using host = await startTestHost({ host: { capabilities: [capability()] } });
    for (const command of ['screen.snapshot', 'screen.record', 'screen.list']) expect(failureCode(await callRaw(host, command, {}))).toBe('consent_required');
  });

  it('refuses a screen that does not exist, and a recording over the 300 s cap', async () => {
    await using host = await startMediaHost([capability()]);
    const missing = await callRaw(host, 'screen.snapshot', { screenIndex: 3 });
    expect(missing.isError).toBe(true);
    expect(failureCode(missing)).toBe('invalid_arguments');
    expect(missing.content[0]!.text).toMatch(/screenIndex 3 does not exist: this display has 1 screen/);
    const long = await callRaw(host, 'screen.record', { durationMs: MAX_SCREEN_RECORD_MS + 1 });
    expect(failureCode(long)).toBe('invalid_arguments');
    // Every way to name a screen is checked, by snapshot and record alike, before anything is captured.
    expect(await callRaw(host, 'screen.record', { screenIndex: 3, durationMs: 1000 })).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/screenIndex 3 does not exist/) }] });
    expect((await callRaw(host, 'screen.snapshot', { monitor: 3 })).content[0]!.text).toMatch(/screenIndex 3 does not exist/);
    for (const screenIndex of [-1, 1.5, 64, '0', null]) {
      for (const command of ['screen.snapshot', 'screen.record']) expect(failureCode(await callRaw(host, command, { screenIndex }))).toBe('invalid_arguments');
    }
  });

  it('records an mp4 whose duration and frame rate ffprobe confirms, with progress and a notice to the user', async () => {
    using dir = tempDir();
    await using host = await startMediaHost([capability()]);
    notices.length = 0;
    const progress: unknown[] = [];
    const result = await callRaw(host, 'screen.record', { durationMs: 3000, fps: 10 }, { onprogress: (update) => progress.push(update) });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toMatchObject({ format: 'mp4', durationMs: 3000, fps: 10, screenIndex: 0, hasAudio: false });
    const resource = result.content.find((part) => part.type === 'resource')!.resource!;
    expect(resource.mimeType).toBe('video/mp4');
    expect(resource.blob).toBe(result.structuredContent!.base64);
    const probe = ffprobe(Buffer.from(resource.blob!, 'base64'), dir.path);
    const video = probe.streams.find((stream) => stream.codec_type === 'video')!;
    expect(video).toMatchObject({ codec_name: 'h264', width: 1920, height: 1080 });
    expect(rate(video.avg_frame_rate)).toBeCloseTo(10, 1);
    expect(probe.durationS).toBeGreaterThan(2.7);
    expect(probe.durationS).toBeLessThan(3.3);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(notices).toEqual([{ title: 'capnode is recording your screen', body: expect.stringMatching(/^For 3 s, asked by /) }]);
  });

  it('tells the user through the system.notify backend (notify-send) by default', async () => {
    using dir = tempDir();
    // notify-send as a recorder: the desktop's notification daemon is what a test machine lacks.
    const log = join(dir.path, 'notify.log');
    writeFileSync(join(dir.path, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" >> '${log}'\n`);
    chmodSync(join(dir.path, 'notify-send'), 0o755);
    const env = { ...xvfb.env, PATH: `${dir.path}:${process.env.PATH}` };
    await using host = await startMediaHost([createScreenCapability({ env })]);
    const result = await callRaw(host, 'screen.record', { durationMs: 500, fps: 5 });
    expect(result.isError).not.toBe(true);
    const lines = await eventually(() => {
      try {
        return readFileSync(log, 'utf8').split('\n');
      } catch {
        return undefined;
      }
    }, { what: 'the notification' });
    expect(lines).toEqual(expect.arrayContaining(['--urgency', 'critical', 'capnode is recording your screen']));
    expect(lines.find((line) => line.startsWith('For '))).toMatch(/^For 1 s, asked by .*mcp-http/);
  });

  it('cancels a recording mid-way and leaves no ffmpeg process behind', async () => {
    await using host = await startMediaHost([capability()]);
    const controller = new AbortController();
    const pending = callRaw(host, 'screen.record', { durationMs: 60_000, fps: 5 }, { signal: controller.signal });
    const [pid] = await eventually(() => {
      const found = processesMatching('ffmpeg', 'x11grab', `${xvfb.display}+`);
      return found.length ? found : undefined;
    }, { what: 'ffmpeg recording the display' });
    controller.abort('test cancels');
    await expect(pending).rejects.toThrow();
    await eventually(() => processesMatching('ffmpeg', 'x11grab', `${xvfb.display}+`).length === 0, { what: `ffmpeg ${pid} to exit` });
    // The host still serves after the cancelled call.
    expect((await callRaw(host, 'screen.snapshot', { maxWidth: 64 })).structuredContent).toMatchObject({ width: 64 });
  });

  it('reports unavailable (install ffmpeg) on a PATH without ffmpeg, and when no display exists', async () => {
    const noFfmpeg = createScreenCapability({ env: { ...xvfb.env, PATH: '/nonexistent' }, notify: false });
    const record = noFfmpeg.commands.find((command) => command.name === 'screen.record')!;
    expect(await record.availability!({})).toEqual({ available: false, install: expect.stringMatching(/^ffmpeg/) });
    await using host = await startMediaHost([noFfmpeg]);
    const result = await callRaw(host, 'screen.record', { durationMs: 1000 });
    expect(failureCode(result)).toBe('unavailable');
    expect(result.content[0]!.text).toMatch(/^unavailable here: install ffmpeg/);
    const jpeg = await callRaw(host, 'screen.snapshot', { format: 'jpeg' });
    expect(failureCode(jpeg)).toBe('unavailable');
    // PNG needs no ffmpeg: it is encoded in process.
    expect((await callRaw(host, 'screen.snapshot', { maxWidth: 32 })).structuredContent).toMatchObject({ width: 32, height: 18 });

    const noDisplay = createScreenCapability({ env: { PATH: process.env.PATH }, notify: false, platform: 'linux' });
    const snapshot = noDisplay.commands.find((command) => command.name === 'screen.snapshot')!;
    expect(await snapshot.availability!({})).toEqual({ available: false, install: expect.stringContaining('X11 display') });
    const gone = createScreenCapability({ display: ':999', env: { PATH: process.env.PATH }, notify: false, platform: 'linux' });
    expect(await gone.commands[1]!.availability!({})).toMatchObject({ available: false });
  });
});
