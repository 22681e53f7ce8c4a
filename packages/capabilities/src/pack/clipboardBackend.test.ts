import { describe, expect, it } from 'vitest';
import { clipboardRequirements } from './clipboard.js';
import { macScript, parseMacClipboardInfo, parseTargets, pngSize, windowsScript, wlArgs, xclipArgs } from './clipboardBackend.js';

describe('clipboard argument builders', () => {
  it('xclip: the clipboard selection, an explicit target, output or input', () => {
    expect(xclipArgs('targets')).toEqual(['-selection', 'clipboard', '-t', 'TARGETS', '-o']);
    expect(xclipArgs('read', 'image/png')).toEqual(['-selection', 'clipboard', '-t', 'image/png', '-o']);
    expect(xclipArgs('write')).toEqual(['-selection', 'clipboard', '-t', 'UTF8_STRING', '-i']);
  });

  it('wl-clipboard: types listed, text without a trailing newline, PNG by type', () => {
    expect(wlArgs('targets')).toEqual({ program: 'wl-paste', args: ['--list-types'] });
    expect(wlArgs('readText')).toEqual({ program: 'wl-paste', args: ['--no-newline', '--type', 'text'] });
    expect(wlArgs('writeImage')).toEqual({ program: 'wl-copy', args: ['--type', 'image/png'] });
  });

  it('macOS: PNG moves through a file named in argv, never spliced into the script', () => {
    const script = macScript('writeImage').join('\n');
    expect(script).toContain('item 1 of argv');
    expect(script).toContain('«class PNGf»');
    expect(macScript('readImage').join('\n')).toMatch(/write \(the clipboard as «class PNGf»\) to f/);
  });

  it('Windows: STA clipboard scripts read the image file from the environment, text from stdin', () => {
    expect(windowsScript('writeImage')).toContain('$env:CAPNODE_CLIP_FILE');
    expect(windowsScript('writeText')).toContain('[Console]::In.ReadToEnd()');
    expect(windowsScript('readImage')).toContain('exit 3');
  });

  it('picks the backend from platform and session', () => {
    expect(clipboardRequirements('linux', { DISPLAY: ':0' }).backend).toBe('xclip');
    expect(clipboardRequirements('linux', { WAYLAND_DISPLAY: 'wayland-0', DISPLAY: ':0' }).backend).toBe('wl-clipboard');
    expect(clipboardRequirements('darwin', {}).backend).toBe('macos');
    expect(clipboardRequirements('win32', {}).backend).toBe('windows');
  });
});

describe('clipboard parsers', () => {
  it('reads X11/Wayland target lists', () => {
    expect(parseTargets('TARGETS\nUTF8_STRING\n')).toEqual({ text: true, image: false, textTarget: 'UTF8_STRING' });
    expect(parseTargets('TARGETS\nimage/png\n')).toEqual({ text: false, image: true });
    expect(parseTargets('text/plain;charset=utf-8\ntext/plain\nimage/png\n')).toEqual({ text: true, image: true, textTarget: 'text/plain;charset=utf-8' });
    expect(parseTargets('')).toEqual({ text: false, image: false });
  });

  it('reads macOS clipboard info', () => {
    expect(parseMacClipboardInfo('«class PNGf», 1234, «class 8BPS», 5678')).toEqual({ text: false, image: true });
    expect(parseMacClipboardInfo('«class utf8», 5, string, 5, Unicode text, 10')).toEqual({ text: true, image: false });
  });

  it('reads PNG dimensions and refuses non-PNG data', () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==', 'base64');
    expect(pngSize(png)).toEqual({ width: 3, height: 2 });
    expect(pngSize(Buffer.from('GIF89a............................'))).toBeUndefined();
    expect(pngSize(png.subarray(0, 10))).toBeUndefined();
  });
});
