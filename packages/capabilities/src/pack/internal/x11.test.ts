import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasXvfb, startXvfb } from '../../../../../tests/support/xvfb.js';
import { x11ImageToRgb } from './pixels.js';
import { connectX11, parseDisplay, parseSetup, parseXauthority, pickXauthEntry, type X11Address } from './x11.js';

function xauthEntry(family: number, address: Buffer, number: string, name: string, data: Buffer): Buffer {
  const field = (value: Buffer) => Buffer.concat([Buffer.from([value.length >> 8, value.length & 0xff]), value]);
  return Buffer.concat([Buffer.from([family >> 8, family & 0xff]), field(address), field(Buffer.from(number)), field(Buffer.from(name)), field(data)]);
}

describe('parseDisplay', () => {
  it('maps local names to the unix socket and host names to TCP 6000+n', () => {
    expect(parseDisplay(':99')).toEqual({ kind: 'unix', path: '/tmp/.X11-unix/X99', display: 99, screen: 0 });
    expect(parseDisplay(':0.1')).toEqual({ kind: 'unix', path: '/tmp/.X11-unix/X0', display: 0, screen: 1 });
    expect(parseDisplay('unix:3')).toMatchObject({ kind: 'unix', display: 3 });
    expect(parseDisplay('localhost:10.0')).toEqual({ kind: 'tcp', host: 'localhost', port: 6010, display: 10, screen: 0 });
  });

  it('refuses what is no display name', () => {
    for (const value of [undefined, '', 'wayland-0', ':', ':x', '/tmp/.X11-unix/X0', ':1.2.3']) expect(parseDisplay(value)).toBeUndefined();
  });
});

describe('Xauthority', () => {
  const cookie = Buffer.alloc(16, 7);
  const file = Buffer.concat([
    xauthEntry(256, Buffer.from('otherhost'), '5', 'MIT-MAGIC-COOKIE-1', Buffer.alloc(16, 1)),
    xauthEntry(256, Buffer.from('myhost'), '4', 'MIT-MAGIC-COOKIE-1', Buffer.alloc(16, 2)),
    xauthEntry(256, Buffer.from('myhost'), '5', 'XDM-AUTHORIZATION-1', Buffer.alloc(8, 3)),
    xauthEntry(256, Buffer.from('myhost'), '5', 'MIT-MAGIC-COOKIE-1', cookie),
  ]);
  const local = parseDisplay(':5') as X11Address;

  it('parses every entry and picks the cookie of this host and display number', () => {
    const entries = parseXauthority(file);
    expect(entries).toHaveLength(4);
    expect(pickXauthEntry(entries, local, 'myhost')?.data).toEqual(cookie);
    expect(pickXauthEntry(entries, parseDisplay(':6') as X11Address, 'myhost')).toBeUndefined();
  });

  it('accepts a wildcard entry and stops at a truncated file without throwing', () => {
    const wild = parseXauthority(xauthEntry(65535, Buffer.alloc(0), '', 'MIT-MAGIC-COOKIE-1', cookie));
    expect(pickXauthEntry(wild, local, 'anyhost')?.data).toEqual(cookie);
    expect(parseXauthority(file.subarray(0, file.length - 3))).toHaveLength(3);
    expect(parseXauthority(Buffer.alloc(1))).toEqual([]);
  });
});

describe('parseSetup', () => {
  it('reads byte order, pixmap formats and the root visual of a setup reply', () => {
    const vendor = Buffer.from('Test');
    const data = Buffer.alloc(32 + 4 + 8 + 40 + 8 + 24);
    data.writeUInt16LE(vendor.length, 16);
    data.writeUInt8(1, 20); // screens
    data.writeUInt8(1, 21); // formats
    data.writeUInt8(0, 22); // LSBFirst
    vendor.copy(data, 32);
    let at = 36;
    data.writeUInt8(24, at);
    data.writeUInt8(32, at + 1);
    data.writeUInt8(32, at + 2);
    at += 8;
    data.writeUInt32LE(0x1e3, at); // root
    data.writeUInt16LE(1280, at + 20);
    data.writeUInt16LE(800, at + 22);
    data.writeUInt32LE(0x21, at + 32);
    data.writeUInt8(24, at + 38);
    data.writeUInt8(1, at + 39);
    at += 40;
    data.writeUInt8(24, at);
    data.writeUInt16LE(1, at + 2);
    at += 8;
    data.writeUInt32LE(0x21, at);
    data.writeUInt8(4, at + 4);
    data.writeUInt32LE(0xff0000, at + 8);
    data.writeUInt32LE(0xff00, at + 12);
    data.writeUInt32LE(0xff, at + 16);
    const setup = parseSetup(data);
    expect(setup.vendor).toBe('Test');
    expect(setup.imageByteOrder).toBe(0);
    expect(setup.formats.get(24)).toEqual({ bitsPerPixel: 32, scanlinePad: 32 });
    expect(setup.screens[0]).toMatchObject({ root: 0x1e3, width: 1280, height: 800, rootDepth: 24, rootVisual: 0x21 });
    expect(setup.screens[0]!.visuals.get(0x21)).toMatchObject({ redMask: 0xff0000, greenMask: 0xff00, blueMask: 0xff });
  });
});

describe.skipIf(!hasXvfb())('connectX11 against Xvfb', () => {
  it('reads a 24-bit screen: setup, RandR monitor, region GetImage, XFIXES cursor', async () => {
    await using xvfb = await startXvfb({ width: 800, height: 600 });
    xvfb.paint('#123456');
    await using client = await connectX11({ display: xvfb.display, xauthority: '/nonexistent' });
    expect(client.screen).toMatchObject({ width: 800, height: 600, rootDepth: 24 });
    expect(await client.getMonitors()).toEqual([expect.objectContaining({ x: 0, y: 0, width: 800, height: 600 })]);
    const image = await client.getImage({ x: 10, y: 20, width: 30, height: 40 });
    expect(image).toMatchObject({ width: 30, height: 40, bitsPerPixel: 32 });
    const rgb = x11ImageToRgb(image);
    expect([...rgb.data.subarray(0, 3)]).toEqual([0x12, 0x34, 0x56]);
    const cursor = await client.getCursor();
    expect(cursor).toMatchObject({ x: 400, y: 300 });
    expect(cursor!.argb.length).toBe(cursor!.width * cursor!.height);
  });

  it('decodes a 16-bit (565) screen through the generic path', async () => {
    await using xvfb = await startXvfb({ width: 64, height: 48, depth: 16 });
    xvfb.paint('#ff0000');
    await using client = await connectX11({ display: xvfb.display });
    const rgb = x11ImageToRgb(await client.getImage({ x: 0, y: 0, width: 64, height: 48 }));
    expect([...rgb.data.subarray(0, 3)]).toEqual([255, 0, 0]);
  });

  it('turns an X error into a failed CapabilityError and keeps the connection usable', async () => {
    await using xvfb = await startXvfb({ width: 64, height: 48 });
    await using client = await connectX11({ display: xvfb.display });
    await expect(client.getImage({ x: 60, y: 0, width: 10, height: 10 })).rejects.toMatchObject({ code: 'failed', message: expect.stringContaining('BadMatch') });
    expect((await client.getImage({ x: 0, y: 0, width: 4, height: 4 })).width).toBe(4);
  });

  it('presents the Xauthority cookie of a server that checks one, and is refused without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-xauth-'));
    try {
      const authFile = join(dir, 'Xauthority');
      const wrongFile = join(dir, 'wrong');
      // Display number unknown until the server starts: a wildcard-number entry for this host.
      writeFileSync(authFile, xauthEntry(256, Buffer.from(hostname()), '', 'MIT-MAGIC-COOKIE-1', randomBytes(16)));
      writeFileSync(wrongFile, xauthEntry(256, Buffer.from(hostname()), '', 'MIT-MAGIC-COOKIE-1', randomBytes(16)));
      await using xvfb = await startXvfb({ width: 64, height: 48, authFile });
      await using client = await connectX11({ display: xvfb.display, xauthority: authFile });
      expect(client.screen.width).toBe(64);
      await expect(connectX11({ display: xvfb.display, xauthority: wrongFile })).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/refused the connection.*XAUTHORITY/) });
      await expect(connectX11({ display: xvfb.display, xauthority: join(dir, 'missing') })).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails unavailable when nothing listens on the display', async () => {
    await expect(connectX11({ display: ':998' })).rejects.toMatchObject({ code: 'unavailable' });
  });
});
