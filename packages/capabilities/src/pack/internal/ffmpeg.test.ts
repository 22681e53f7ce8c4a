import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, isAlive } from '../../../../../tests/support/poll.js';
import { ffmpegHasDevice, lastLine, parseFfmpegDevices, requireFfmpeg, runMedia } from './ffmpeg.js';

describe('ffmpeg helpers', () => {
  it('parses the demuxing devices of ffmpeg -devices', () => {
    const output = `Devices:\n D. = Demuxing supported\n .E = Muxing supported\n --\n DE alsa            ALSA audio output\n  E caca            caca output\n D  lavfi           Libavfilter virtual input device\n DE video4linux2,v4l2 Video4Linux2 output device\n D  x11grab         X11 screen capture, using XCB\n`;
    expect([...parseFfmpegDevices(output)].sort()).toEqual(['alsa', 'lavfi', 'v4l2', 'video4linux2', 'x11grab']);
    expect(lastLine('a\n\nlast one  \n\n')).toBe('last one');
  });

  it.skipIf(process.platform === 'win32')('does not cache a device listing that failed or whose caller cancelled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-ffmpeg-devices-'));
    try {
      // An ffmpeg stand-in whose first `-devices` run fails; later runs list x11grab.
      const file = join(dir, 'ffmpeg');
      const ran = join(dir, 'ran');
      writeFileSync(file, `#!/bin/sh\nif [ ! -e '${ran}' ]; then : > '${ran}'; echo broken >&2; exit 1; fi\nprintf ' D  x11grab         X11 screen capture\\n'\n`);
      chmodSync(file, 0o755);
      const live = () => new AbortController().signal;
      expect(await ffmpegHasDevice(file, 'x11grab', process.env, live())).toBe(false);
      expect(await ffmpegHasDevice(file, 'x11grab', process.env, live())).toBe(true);
      // A caller that cancels gets `cancelled`, and the shared listing stays good for the next one.
      const other = join(dir, 'ffmpeg2');
      writeFileSync(other, `#!/bin/sh\nprintf ' D  pulse           Pulse audio input\\n'\n`);
      chmodSync(other, 0o755);
      const controller = new AbortController();
      const cancelled = ffmpegHasDevice(other, 'pulse', process.env, controller.signal);
      controller.abort();
      await expect(cancelled).rejects.toMatchObject({ code: 'cancelled' });
      expect(await ffmpegHasDevice(other, 'pulse', process.env, live())).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails unavailable with the install hint when ffmpeg is not on PATH', async () => {
    await expect(requireFfmpeg({ PATH: '/nonexistent' })).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/^unavailable here: install ffmpeg/) });
  });

  it('collects binary stdout, feeds stdin, and reports a failing exit with its last stderr line', async () => {
    const ok = await runMedia({ file: process.execPath, args: ['-e', 'process.stdin.pipe(process.stdout)'], env: process.env, input: Buffer.from([0, 255, 1]), signal: new AbortController().signal, timeoutMs: 10_000, maxOutputBytes: 10, what: 'the echo' });
    expect([...ok.stdout]).toEqual([0, 255, 1]);
    await expect(runMedia({ file: process.execPath, args: ['-e', 'console.error("first\\nbad input"); process.exit(3)'], env: process.env, signal: new AbortController().signal, timeoutMs: 10_000, maxOutputBytes: 10, what: 'the tool' })).rejects.toMatchObject({ code: 'failed', message: 'The tool failed: bad input' });
    await expect(runMedia({ file: process.execPath, args: ['-e', 'process.stdout.write(Buffer.alloc(100))'], env: process.env, signal: new AbortController().signal, timeoutMs: 10_000, maxOutputBytes: 11, what: 'the tool', shrinkHint: 'ask for less' })).rejects.toMatchObject({ code: 'payload_too_large', message: 'The tool is larger than 10 bytes; ask for less.' });
  });

  it('on cancellation stops the whole process group (SIGTERM, then SIGKILL) and settles only after the exit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-media-test-'));
    try {
      const pidFile = join(dir, 'grandchild.pid');
      const controller = new AbortController();
      // A child that ignores SIGTERM and starts a grandchild: both must be gone when the promise settles.
      const script = `process.on('SIGTERM', () => {}); const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)); setInterval(() => {}, 1000);`;
      const run = runMedia({ file: process.execPath, args: ['-e', script], env: process.env, signal: controller.signal, timeoutMs: 60_000, maxOutputBytes: 100, what: 'the recording', killGraceMs: 200 });
      const grandchild = Number(await eventually(() => { try { return readFileSync(pidFile, 'utf8'); } catch { return ''; } }, { what: 'the grandchild pid' }));
      expect(isAlive(grandchild)).toBe(true);
      controller.abort();
      await expect(run).rejects.toMatchObject({ code: 'cancelled', message: 'The recording was cancelled.' });
      await eventually(() => !isAlive(grandchild), { what: 'the grandchild to be killed', timeoutMs: 3_000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on cancellation also kills what a program that obeyed SIGTERM left behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-media-test-'));
    try {
      const pidFile = join(dir, 'grandchild.pid');
      const controller = new AbortController();
      // The child ends on SIGTERM; its grandchild ignores SIGTERM (and holds no pipe of ours).
      const script = `const c = require('child_process').spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' }); setTimeout(() => require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)), 300); setInterval(() => {}, 1000);`;
      const run = runMedia({ file: process.execPath, args: ['-e', script], env: process.env, signal: controller.signal, timeoutMs: 60_000, maxOutputBytes: 100, what: 'the recording', killGraceMs: 30_000 });
      const grandchild = Number(await eventually(() => { try { return readFileSync(pidFile, 'utf8'); } catch { return ''; } }, { what: 'the grandchild pid' }));
      controller.abort();
      await expect(run).rejects.toMatchObject({ code: 'cancelled' });
      await eventually(() => !isAlive(grandchild), { what: 'the grandchild to be killed', timeoutMs: 3_000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('times out with a timeout error', async () => {
    await expect(runMedia({ file: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: process.env, signal: new AbortController().signal, timeoutMs: 200, maxOutputBytes: 10, what: 'the tool' })).rejects.toMatchObject({ code: 'timeout' });
  });
});
