import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, encodePng, jpegSize, pngScanlines, pngSize } from './png.js';

/** Reads the chunks of a PNG, checking each CRC. */
function chunks(png: Buffer): { type: string; body: Buffer }[] {
  const out: { type: string; body: Buffer }[] = [];
  let at = 8;
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    expect(png.readUInt32BE(at + 8 + length)).toBe(crc32(png.subarray(at + 4, at + 8 + length)));
    out.push({ type, body });
    at += 12 + length;
  }
  return out;
}

describe('crc32', () => {
  it('gives the standard CRC-32 values', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.from('IEND'))).toBe(0xae426082);
    expect(crc32(Buffer.alloc(0))).toBe(0);
  });
});

describe('encodePng', () => {
  it('writes signature, IHDR (8-bit truecolour), one IDAT of filter-0 scanlines, IEND', async () => {
    const data = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    const png = await encodePng({ width: 3, height: 2, data });
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const parts = chunks(png);
    expect(parts.map((part) => part.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect([...parts[0]!.body]).toEqual([0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0, 0, 0]);
    const raw = inflateSync(parts[1]!.body);
    expect(raw).toEqual(Buffer.concat([Buffer.from([0]), data.subarray(0, 9), Buffer.from([0]), data.subarray(9)]));
    expect(pngSize(png)).toEqual({ width: 3, height: 2 });
  });

  it('refuses pixel data of the wrong length', async () => {
    await expect(encodePng({ width: 2, height: 2, data: Buffer.alloc(11) })).rejects.toThrow(RangeError);
  });

  it('puts one filter byte before every row', () => {
    const raw = pngScanlines({ width: 1, height: 3, data: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]) });
    expect([...raw]).toEqual([0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9]);
  });
});

describe('image sizes', () => {
  it('reads a JPEG SOF0 size after other segments, and refuses non-images', () => {
    const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x04, 0x00, 0x00]);
    const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(jpegSize(Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]))).toEqual({ width: 640, height: 480 });
    expect(jpegSize(Buffer.from('not a jpeg at all'))).toBeUndefined();
    expect(pngSize(Buffer.from('not a png, not at all'))).toBeUndefined();
  });
});

describe('encodePngScanlinesSync', () => {
  it('gives the same file as the async encoder, and checks the scanline length', async () => {
    const { encodePngScanlinesSync } = await import('./png.js');
    const image = { width: 2, height: 2, data: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) };
    expect(encodePngScanlinesSync(2, 2, pngScanlines(image))).toEqual(await encodePng(image));
    expect(() => encodePngScanlinesSync(2, 2, Buffer.alloc(13))).toThrow(RangeError);
  });
});
