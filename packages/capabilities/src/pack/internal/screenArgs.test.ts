import { describe, expect, it } from 'vitest';
import {
  avfoundationRecordArgs,
  gdigrabRecordArgs,
  mp4OutputArgs,
  parseAvfoundationDevices,
  parseDshowDevices,
  parseMacDisplays,
  parseWindowsScreens,
  powershellArgs,
  PULSE_AUDIO_INPUT,
  screencaptureArgs,
  sipsArgs,
  windowsSnapshotEnv,
  WINDOWS_SNAPSHOT_SCRIPT,
  x11grabRecordArgs,
} from './screenArgs.js';
import { withSizeLimit } from './mediaContext.js';
import { MAX_MEDIA_BYTES } from './media.js';

const AVFOUNDATION_LISTING = `[AVFoundation indev @ 0x7f8] AVFoundation video devices:
[AVFoundation indev @ 0x7f8] [0] FaceTime HD Camera
[AVFoundation indev @ 0x7f8] [1] Capture screen 0
[AVFoundation indev @ 0x7f8] [2] Capture screen 1
[AVFoundation indev @ 0x7f8] AVFoundation audio devices:
[AVFoundation indev @ 0x7f8] [0] MacBook Pro Microphone
: Input/output error`;

const DSHOW_LISTING_NEW = `[dshow @ 000001] "Integrated Camera" (video)
[dshow @ 000001]   Alternative name "@device_pnp_\\\\?\\usb#vid_04f2"
[dshow @ 000001] "Microphone Array (Realtek)" (audio)
[dshow @ 000001]   Alternative name "@device_cm_{33D9A762}\\wave_{ABC}"
dummy: Immediate exit requested`;

const DSHOW_LISTING_OLD = `[dshow @ 0x1] DirectShow video devices (some may be both video and audio devices)
[dshow @ 0x1]  "USB Camera"
[dshow @ 0x1] DirectShow audio devices
[dshow @ 0x1]  "Line In"`;

describe('Linux (x11grab) arguments', () => {
  it('grabs one screen rectangle at the fps, for the duration, into an H.264 mp4 with even dimensions', () => {
    const args = x11grabRecordArgs(':1', { x: 1920, y: 0, width: 1280, height: 1024 }, { fps: 10, durationMs: 3000, output: '/tmp/o.mp4' });
    expect(args.join(' ')).toBe(
      '-hide_banner -nostdin -loglevel error -f x11grab -draw_mouse 1 -framerate 10 -video_size 1280x1024 -i :1+1920,0 -t 3.000 -vf scale=trunc(iw/2)*2:trunc(ih/2)*2 -r 10 -c:v libx264 -preset ultrafast -pix_fmt yuv420p -movflags +faststart -y /tmp/o.mp4',
    );
  });

  it('adds pulse audio and AAC when asked, hides the pointer when asked, and limits the file size before the output', () => {
    const args = x11grabRecordArgs(':0', { x: 0, y: 0, width: 8, height: 8 }, { fps: 5, durationMs: 250, output: 'o.mp4', audio: PULSE_AUDIO_INPUT, drawPointer: false });
    expect(args).toEqual(expect.arrayContaining(['-f', 'pulse', '-i', 'default', '-c:a', 'aac']));
    expect(args[args.indexOf('-draw_mouse') + 1]).toBe('0');
    const limited = withSizeLimit(args);
    expect(limited.slice(-3)).toEqual(['-fs', String(MAX_MEDIA_BYTES + 1), 'o.mp4']);
    expect(mp4OutputArgs({ fps: 30, durationMs: 1234, output: 'x', hasAudio: false })).not.toContain('-c:a');
  });
});

describe('macOS arguments and parsers', () => {
  it('screencapture is silent, 1-based display, with the pointer only when asked', () => {
    expect(screencaptureArgs({ index: 0, format: 'png', includePointer: false, file: '/t/s.png' })).toEqual(['-x', '-t', 'png', '-D', '1', '/t/s.png']);
    expect(screencaptureArgs({ index: 1, format: 'jpeg', includePointer: true, file: 'f' })).toEqual(['-x', '-C', '-t', 'jpg', '-D', '2', 'f']);
    expect(sipsArgs({ file: 'f', width: 800, jpegQuality: 70 })).toEqual(['--resampleWidth', '800', '-s', 'formatOptions', '70', 'f']);
    expect(sipsArgs({ file: 'f' })).toEqual(['f']);
  });

  it('parses avfoundation devices and records "Capture screen N" with or without audio', () => {
    const devices = parseAvfoundationDevices(AVFOUNDATION_LISTING);
    expect(devices.video).toEqual([
      { index: 0, name: 'FaceTime HD Camera' },
      { index: 1, name: 'Capture screen 0' },
      { index: 2, name: 'Capture screen 1' },
    ]);
    expect(devices.audio).toEqual([{ index: 0, name: 'MacBook Pro Microphone' }]);
    const args = avfoundationRecordArgs(2, { fps: 10, durationMs: 1000, output: 'o.mp4', audioDevice: 0 });
    expect(args.slice(4, 12)).toEqual(['-f', 'avfoundation', '-capture_cursor', '1', '-framerate', '10', '-i', '2:0']);
    expect(args).toContain('aac');
    expect(avfoundationRecordArgs(1, { fps: 10, durationMs: 1000, output: 'o.mp4' })).toContain('1:none');
  });

  it('parses system_profiler displays, main display first', () => {
    const json = JSON.stringify({
      SPDisplaysDataType: [{ spdisplays_ndrvs: [{ _name: 'DELL U2720Q', _spdisplays_pixels: '3840 x 2160' }, { _name: 'Color LCD', _spdisplays_resolution: '1512 x 982 @ 120.00Hz', spdisplays_main: 'spdisplays_yes' }] }],
    });
    expect(parseMacDisplays(json)).toEqual([
      { index: 0, name: 'Color LCD', primary: true, x: 0, y: 0, width: 1512, height: 982 },
      { index: 1, name: 'DELL U2720Q', primary: false, x: 0, y: 0, width: 3840, height: 2160 },
    ]);
  });
});

describe('Windows arguments and parsers', () => {
  it('runs PowerShell with an encoded script and passes parameters only through the environment', () => {
    const args = powershellArgs(WINDOWS_SNAPSHOT_SCRIPT);
    expect(args.slice(0, 5)).toEqual(['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand']);
    expect(Buffer.from(args[5]!, 'base64').toString('utf16le')).toBe(WINDOWS_SNAPSHOT_SCRIPT);
    expect(windowsSnapshotEnv({ index: 1, format: 'jpeg', quality: 0.8, maxWidth: 1280, includePointer: true, file: 'C:\\t\\s.jpg' })).toEqual({
      CAPNODE_SCREEN_INDEX: '1',
      CAPNODE_SCREEN_FORMAT: 'jpeg',
      CAPNODE_SCREEN_QUALITY: '80',
      CAPNODE_SCREEN_MAX_WIDTH: '1280',
      CAPNODE_SCREEN_POINTER: '1',
      CAPNODE_SCREEN_FILE: 'C:\\t\\s.jpg',
    });
    expect(WINDOWS_SNAPSHOT_SCRIPT).toContain('CopyFromScreen');
  });

  it('parses the screen list (one object or many) and grabs a screen rectangle with gdigrab', () => {
    expect(parseWindowsScreens('{"index":0,"name":"\\\\\\\\.\\\\DISPLAY1","primary":true,"x":0,"y":0,"width":1920,"height":1080}')).toEqual([
      { index: 0, name: 'DISPLAY1', primary: true, x: 0, y: 0, width: 1920, height: 1080 },
    ]);
    expect(parseWindowsScreens('[{"name":"A","x":-1280,"y":0,"width":1280,"height":1024},{"name":"B","primary":true,"width":1920,"height":1080}]')).toHaveLength(2);
    const args = gdigrabRecordArgs({ x: -1280, y: 0, width: 1280, height: 1024 }, { fps: 15, durationMs: 2000, output: 'o.mp4', audioDevice: 'Microphone Array (Realtek)' });
    expect(args.join(' ')).toContain('-f gdigrab -draw_mouse 1 -framerate 15 -offset_x -1280 -offset_y 0 -video_size 1280x1024 -i desktop -f dshow -i audio=Microphone Array (Realtek)');
  });

  it('parses DirectShow listings, new and old style', () => {
    expect(parseDshowDevices(DSHOW_LISTING_NEW)).toEqual([
      { name: 'Integrated Camera', kind: 'video', alternativeName: '@device_pnp_\\\\?\\usb#vid_04f2' },
      { name: 'Microphone Array (Realtek)', kind: 'audio', alternativeName: '@device_cm_{33D9A762}\\wave_{ABC}' },
    ]);
    expect(parseDshowDevices(DSHOW_LISTING_OLD)).toEqual([
      { name: 'USB Camera', kind: 'video' },
      { name: 'Line In', kind: 'audio' },
    ]);
  });
});
