import { describe, expect, it } from 'vitest';
import { avfoundationCameras, cameraInputArgs, clipArgs, dshowCameras, mjpegQscale, pickCamera, positionFromName, snapArgs, type CameraDevice } from './cameraArgs.js';

const devices: CameraDevice[] = [
  { id: '/dev/video0', name: 'USB Camera', position: 'unspecified', deviceType: 'external', source: { kind: 'v4l2', path: '/dev/video0' } },
  { id: 'rear', name: 'Rear', position: 'back', deviceType: 'virtual', source: { kind: 'virtual', lavfi: 'testsrc' } },
];

describe('camera selection', () => {
  it('takes exactly the deviceId, never another camera; facing, else the first', () => {
    expect(pickCamera(devices, { deviceId: 'rear' })).toBe(devices[1]);
    expect(pickCamera(devices, { deviceId: '/dev/video9' })).toEqual({ error: 'unknown_device' });
    expect(pickCamera(devices, { deviceId: 'REAR' })).toEqual({ error: 'unknown_device' });
    expect(pickCamera(devices, { deviceId: '/dev/video9', facing: 'back' })).toEqual({ error: 'unknown_device' });
    expect(pickCamera(devices, { facing: 'back' })).toBe(devices[1]);
    expect(pickCamera(devices, { facing: 'front' })).toBe(devices[0]);
    expect(pickCamera([], {})).toEqual({ error: 'no_camera' });
  });

  it('guesses positions from names', () => {
    expect(positionFromName('FaceTime HD Camera')).toBe('front');
    expect(positionFromName('Surface Camera Rear')).toBe('back');
    expect(positionFromName('Logitech C920')).toBe('unspecified');
  });
});

describe('ffmpeg arguments per backend', () => {
  it('opens v4l2, lavfi, avfoundation and dshow sources', () => {
    expect(cameraInputArgs({ kind: 'v4l2', path: '/dev/video2' })).toEqual(['-f', 'v4l2', '-i', '/dev/video2']);
    expect(cameraInputArgs({ kind: 'virtual', lavfi: 'testsrc=size=640x480:rate=30' })).toEqual(['-f', 'lavfi', '-i', 'testsrc=size=640x480:rate=30']);
    expect(cameraInputArgs({ kind: 'avfoundation', index: 0 }, { avfoundationIndex: 1 })).toEqual(['-f', 'avfoundation', '-framerate', '30', '-i', '0:1']);
    expect(cameraInputArgs({ kind: 'avfoundation', index: 0 })).toContain('0:none');
    expect(cameraInputArgs({ kind: 'dshow', name: 'Integrated Camera' }, { dshowName: 'Mic' })).toEqual(['-f', 'dshow', '-i', 'video=Integrated Camera:audio=Mic']);
  });

  it('snaps one mjpeg frame no wider than maxWidth, letting real cameras settle', () => {
    const virtual = snapArgs({ kind: 'virtual', lavfi: 'testsrc' }, { maxWidth: 1600, quality: 0.95 });
    expect(virtual.slice(virtual.indexOf('-frames:v'))).toEqual(['-frames:v', '1', '-vf', "scale=w='min(iw,1600)':h=-2", '-q:v', '3', '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1']);
    expect(snapArgs({ kind: 'v4l2', path: '/dev/video0' }, { maxWidth: 640, quality: 0.5 })).toContain("select='gte(n,3)',scale=w='min(iw,640)':h=-2");
    expect([mjpegQscale(1), mjpegQscale(0), mjpegQscale(0.5)]).toEqual([2, 31, 17]);
  });

  it('records clips with separate audio inputs or the device own audio', () => {
    const lavfi = clipArgs({ kind: 'virtual', lavfi: 'testsrc' }, { durationMs: 3000, output: 'o.mp4', audio: ['-f', 'lavfi', '-i', 'sine'] });
    expect(lavfi.join(' ')).toContain('-f lavfi -i testsrc -f lavfi -i sine -t 3.000');
    expect(lavfi).toContain('aac');
    const silent = clipArgs({ kind: 'v4l2', path: '/dev/video0' }, { durationMs: 250, output: 'o.mp4', audio: undefined });
    expect(silent).not.toContain('aac');
    const mac = clipArgs({ kind: 'avfoundation', index: 0 }, { durationMs: 1000, output: 'o.mp4', audio: undefined, deviceAudio: { avfoundationIndex: 0 } });
    expect(mac).toContain('0:0');
    expect(mac).toContain('aac');
  });

  it('lists avfoundation cameras without screens, and dshow cameras by their stable alternative name', () => {
    expect(avfoundationCameras([{ index: 0, name: 'FaceTime HD Camera' }, { index: 1, name: 'Capture screen 0' }])).toEqual([
      { id: 'FaceTime HD Camera', name: 'FaceTime HD Camera', position: 'front', deviceType: 'builtIn', source: { kind: 'avfoundation', index: 0 } },
    ]);
    expect(dshowCameras([{ name: 'USB Cam', kind: 'video', alternativeName: '@device_pnp_x' }, { name: 'Mic', kind: 'audio' }])).toEqual([
      { id: '@device_pnp_x', name: 'USB Cam', position: 'unspecified', deviceType: 'external', source: { kind: 'dshow', name: 'USB Cam' } },
    ]);
  });
});
