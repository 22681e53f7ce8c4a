import { execFileSync } from 'node:child_process';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { findExecutable } from '@capnode/capabilities/node';
import { createClipboardCapability, MAX_CLIPBOARD_WRITE_CHARS, probeClipboard } from '@capnode/capabilities/pack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDisplay, type TestDisplay } from '../support/display.js';
import { startPackHost } from '../support/packHost.js';

const ready = process.platform === 'linux' && (await findExecutable('xclip')) && (await findExecutable('Xvfb'));

/** A 3×2 red PNG. */
function redPng(): Buffer {
  return Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==', 'base64');
}

describe.runIf(ready)('clipboard over MCP (xclip on Xvfb)', () => {
  let display: TestDisplay;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    display = await startTestDisplay();
    env = { ...process.env, DISPLAY: display.display, WAYLAND_DISPLAY: '' };
    delete env.WAYLAND_DISPLAY;
  });
  afterAll(() => display?.[Symbol.asyncDispose]());

  it('reads an empty clipboard as empty', async () => {
    await using host = await startPackHost([createClipboardCapability({ env })]);
    const result = await host.call('clipboard.read', {});
    expect(result).toMatchObject({ isError: false, structured: { empty: true, format: 'none', backend: 'xclip' } });
  });

  it('writes text, then reads it back (non-ASCII, leading dashes, newlines intact)', async () => {
    await using host = await startPackHost([createClipboardCapability({ env })]);
    const text = '-o --help\nnaïve café ✓ 日本\n';
    const written = await host.call('clipboard.write', { text });
    expect(written).toMatchObject({ isError: false, structured: { ok: true, format: 'text', bytes: Buffer.byteLength(text) } });
    const read = await host.call('clipboard.read', {});
    expect(read).toMatchObject({ isError: false, text, structured: { format: 'text', text, empty: false } });
    // Another X client sees it too.
    expect(execFileSync('xclip', ['-selection', 'clipboard', '-o'], { env, encoding: 'utf8' })).toBe(text);
  });

  it('writes a PNG image, then reads it back as MCP image content', async () => {
    await using host = await startPackHost([createClipboardCapability({ env })]);
    const png = redPng();
    const written = await host.call('clipboard.write', { imageBase64: png.toString('base64') });
    expect(written).toMatchObject({ isError: false, structured: { ok: true, format: 'png', width: 3, height: 2 } });
    const result = (await host.client.callTool({ name: 'clipboard.read', arguments: { format: 'image' } })) as {
      content: { type: string; data?: string; mimeType?: string }[];
      structuredContent: Record<string, unknown>;
    };
    expect(result.structuredContent).toMatchObject({ format: 'png', mimeType: 'image/png', width: 3, height: 2 });
    const image = result.content.find((part) => part.type === 'image');
    expect(image).toMatchObject({ mimeType: 'image/png' });
    expect(Buffer.from(image!.data!, 'base64').equals(png)).toBe(true);
    // An image on the clipboard is not text: `text` reads an empty clipboard, `auto` falls back to the image.
    expect((await host.call('clipboard.read', { format: 'text' })).structured).toMatchObject({ format: 'text', empty: true });
    expect((await host.call('clipboard.read', {})).structured).toMatchObject({ format: 'png' });
  });

  it('returns promptly from write and leaves no handle that keeps the process alive', async () => {
    const invoker = createInvoker({ registry: createRegistry([createClipboardCapability({ env })]) });
    // Child processes and their pipes are what would keep a host alive after a forked xclip.
    const handles = () => process.getActiveResourcesInfo().filter((name) => name === 'ProcessWrap' || name === 'PipeWrap').length;
    const before = handles();
    for (let index = 0; index < 5; index++) {
      const outcome = await invoker.invoke({ command: 'clipboard.write', args: { text: `value ${index}` }, transport: 'internal' });
      expect(outcome.result.ok).toBe(true);
      const read = await invoker.invoke({ command: 'clipboard.read', args: {}, transport: 'internal' });
      expect(read.result).toMatchObject({ ok: true, structured: { text: `value ${index}` } });
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(handles()).toBeLessThanOrEqual(before);
  });

  it('writes text up to MAX_CLIPBOARD_WRITE_CHARS, and reads at most 4 MiB back, marked truncated, whole characters only', async () => {
    await using host = await startPackHost([createClipboardCapability({ env })]);
    expect(await host.call('clipboard.write', { text: 'a'.repeat(MAX_CLIPBOARD_WRITE_CHARS) })).toMatchObject({ isError: false, structured: { bytes: MAX_CLIPBOARD_WRITE_CHARS } });
    expect(await host.call('clipboard.write', { text: 'a'.repeat(MAX_CLIPBOARD_WRITE_CHARS + 1) })).toMatchObject({ isError: true, text: expect.stringMatching(/text/) });
    expect(execFileSync('xclip', ['-selection', 'clipboard', '-o'], { env, maxBuffer: 8 << 20 }).length).toBe(MAX_CLIPBOARD_WRITE_CHARS);
    // Another X client owns 5 MiB of text, where the 4 MiB cut falls inside a two-byte character.
    const limit = 4 * 1024 * 1024;
    execFileSync('xclip', ['-selection', 'clipboard', '-i'], { env, input: 'a' + 'é'.repeat(limit / 2 + 100_000), stdio: ['pipe', 'ignore', 'ignore'] });
    const read = await host.call('clipboard.read', { format: 'text' });
    expect(read.structured).toMatchObject({ format: 'text', truncated: true });
    expect((read.structured as { text: string }).text).toBe('a' + 'é'.repeat(limit / 2 - 1));
  });

  it('refuses bad input: both or neither field, non-PNG data, non-base64', async () => {
    await using host = await startPackHost([createClipboardCapability({ env })]);
    expect((await host.call('clipboard.write', {})).isError).toBe(true);
    expect((await host.call('clipboard.write', { text: 'a', imageBase64: redPng().toString('base64') })).isError).toBe(true);
    expect(await host.call('clipboard.write', { imageBase64: Buffer.from('GIF89a').toString('base64') })).toMatchObject({ isError: true, text: expect.stringMatching(/not a PNG/) });
    expect(await host.call('clipboard.write', { imageBase64: '!!!' })).toMatchObject({ isError: true, text: expect.stringMatching(/not base64/) });
    expect((await host.call('clipboard.read', { format: 'bmp' })).isError).toBe(true);
  });
});

describe('clipboard availability', () => {
  it('is unavailable without a display or without xclip, with a hint naming only what is missing', async () => {
    // xclip installed (CI installs it), no DISPLAY: the hint asks for a display, not for xclip.
    expect(await probeClipboard({ platform: 'linux', env: { PATH: process.env.PATH ?? '' } })).toEqual({ available: false, install: 'an X display: DISPLAY is not set (xclip is installed)' });
    expect(await probeClipboard({ platform: 'linux', env: { PATH: '/nonexistent' } })).toEqual({ available: false, install: expect.stringMatching(/xclip .*X display/) });
    expect(await probeClipboard({ platform: 'linux', env: { PATH: '/nonexistent', DISPLAY: ':0' } })).toEqual({ available: false, install: expect.stringMatching(/apt install xclip/) });
    expect(await probeClipboard({ platform: 'linux', env: { PATH: '/nonexistent', WAYLAND_DISPLAY: 'wayland-0' } })).toEqual({ available: false, install: expect.stringMatching(/wl-clipboard/) });
    expect(await probeClipboard({ platform: 'darwin', env: { PATH: '/nonexistent' } })).toEqual({ available: false, install: expect.stringMatching(/pbcopy/) });
  });

  it('fails unavailable when called anyway', async () => {
    const invoker = createInvoker({ registry: createRegistry([createClipboardCapability({ platform: 'linux', env: { PATH: '/nonexistent' } })]) });
    const outcome = await invoker.invoke({ command: 'clipboard.read', args: {}, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/^unavailable here: install xclip/) } });
  });
});
