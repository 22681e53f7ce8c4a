import { describe, expect, it } from 'vitest';
import { createCameraCapability, createScreenCapability } from '@capnode/capabilities/pack';
import { hasXvfb, startXvfb } from '../support/xvfb.js';
import { callRaw, failureCode, hasProgram } from '../pack/screenSupport.js';
import { startTestHost } from '../support/testHost.js';

const VIRTUAL = { id: 'virtual-test', name: 'Virtual test pattern', lavfi: 'testsrc=size=160x120:rate=30' };

function camera() {
  return createCameraCapability({ virtualDevices: [VIRTUAL], realDevices: false, notify: false });
}

describe.skipIf(!hasProgram('ffmpeg'))('consent over every input of a call (real host, SDK v2 client over HTTP)', () => {
  it('a camera clip with sound needs microphone consent too: camera allowed, microphone off refuses; without sound it runs', async () => {
    await using host = await startTestHost({ settings: { consent: { camera: 'allow' } }, host: { capabilities: [camera()], builtinPlugins: false } });
    // includeAudio defaults to true: the microphone would be recorded.
    const refused = await callRaw(host, 'camera.clip', { deviceId: 'virtual-test', durationMs: 250 });
    expect(refused.isError).toBe(true);
    expect(failureCode(refused)).toBe('consent_required');
    expect(refused.content[0]!.text).toContain('microphone access is off');
    const caseVariant = await callRaw(host, 'CAMERA.CLIP', { deviceId: 'virtual-test', durationMs: 250, includeAudio: true });
    expect(failureCode(caseVariant)).toBe('consent_required');
    const silent = await callRaw(host, 'camera.clip', { deviceId: 'virtual-test', durationMs: 250, includeAudio: false });
    expect(silent.isError).not.toBe(true);
    expect(silent.structuredContent).toMatchObject({ format: 'mp4', hasAudio: false });
  });

  it.skipIf(!hasXvfb())('screen.record with includeAudio needs microphone consent beside screen (real Xvfb display)', async () => {
    const xvfb = await startXvfb({ width: 320, height: 240 });
    try {
      await using host = await startTestHost({ settings: { consent: { screen: 'allow' } }, host: { capabilities: [createScreenCapability({ env: xvfb.env, notify: false })], builtinPlugins: false } });
      const refused = await callRaw(host, 'screen.record', { durationMs: 250, includeAudio: true });
      expect(failureCode(refused)).toBe('consent_required');
      expect(refused.content[0]!.text).toContain('microphone access is off');
      const silent = await callRaw(host, 'screen.record', { durationMs: 250, fps: 5 });
      expect(silent.isError).not.toBe(true);
    } finally {
      await xvfb.close();
    }
  });

  it('stt.transcribe of a file needs microphone consent: off refuses before the path is even looked at', async () => {
    // Availability is not probed, so a missing speech backend cannot answer `unavailable` in consent's place.
    await using host = await startTestHost({ host: { probeAvailability: false } });
    const result = await callRaw(host, 'stt.transcribe', { inputPath: '/etc/shadow' });
    expect(result.isError).toBe(true);
    expect(failureCode(result)).toBe('consent_required');
    expect(result.content[0]!.text).toContain('microphone access is off');
    expect(result.content[0]!.text).not.toMatch(/exist|regular|root/);
  });
});
