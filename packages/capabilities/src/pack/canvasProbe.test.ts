import { describe, expect, it } from 'vitest';
import { probeCanvas } from './canvas.js';

describe('probeCanvas', () => {
  it('names what is missing: Chromium, or (Linux) a graphical session, saying Chromium is there', () => {
    expect(probeCanvas({ platform: 'linux', env: { PATH: '/nonexistent', CAPNODE_CHROMIUM: '/nonexistent/chromium' } })).toEqual({ available: false, install: expect.stringMatching(/^Chromium or Google Chrome/) });
    const noDisplay = probeCanvas({ platform: 'linux', env: { PATH: '/nonexistent' }, executable: '/usr/bin/chromium' });
    expect(noDisplay).toEqual({ available: false, install: 'a graphical session for the canvas window: neither DISPLAY nor WAYLAND_DISPLAY is set (Chromium is installed)' });
    expect(probeCanvas({ platform: 'linux', env: { DISPLAY: ':0' }, executable: '/usr/bin/chromium' })).toEqual({ available: true });
    expect(probeCanvas({ platform: 'linux', env: { WAYLAND_DISPLAY: 'wayland-0' }, executable: '/usr/bin/chromium' })).toEqual({ available: true });
    expect(probeCanvas({ platform: 'darwin', env: {}, executable: '/Applications/Chromium.app' })).toEqual({ available: true });
  });
});
