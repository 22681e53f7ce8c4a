import { describe, expect, it } from 'vitest';
import { downscaleRgb, drawCursor, fitWidth, x11ImageToRgb, x11ImageToScanlines } from './pixels.js';
import type { X11Image } from './x11.js';

function image(overrides: Partial<X11Image>): X11Image {
  return { width: 1, height: 1, depth: 24, bitsPerPixel: 32, bytesPerLine: 4, littleEndian: true, redMask: 0xff0000, greenMask: 0xff00, blueMask: 0xff, data: Buffer.alloc(4), ...overrides };
}

describe('x11ImageToRgb', () => {
  it('decodes BGRX little-endian rows, skipping row padding', () => {
    const data = Buffer.from([3, 2, 1, 0, 6, 5, 4, 0, 99, 99, 99, 99, 9, 8, 7, 0, 12, 11, 10, 0, 99, 99, 99, 99]);
    expect([...x11ImageToRgb(image({ width: 2, height: 2, bytesPerLine: 12, data })).data]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('decodes big-endian 32-bit, 24-bit and 16-bit (565) pixels through the masks', () => {
    expect([...x11ImageToRgb(image({ littleEndian: false, data: Buffer.from([0, 1, 2, 3]) })).data]).toEqual([1, 2, 3]);
    expect([...x11ImageToRgb(image({ bitsPerPixel: 24, bytesPerLine: 4, data: Buffer.from([3, 2, 1, 0]) })).data]).toEqual([1, 2, 3]);
    const white565 = image({ depth: 16, bitsPerPixel: 16, bytesPerLine: 4, redMask: 0xf800, greenMask: 0x7e0, blueMask: 0x1f, data: Buffer.from([0xff, 0xff, 0, 0]) });
    expect([...x11ImageToRgb(white565).data]).toEqual([255, 255, 255]);
    const red565 = image({ ...white565, data: Buffer.from([0x00, 0xf8, 0, 0]) });
    expect([...x11ImageToRgb(red565).data]).toEqual([255, 0, 0]);
  });

  it('writes PNG scanlines (filter byte, RGB) in one pass, aligned or not, and for other layouts', () => {
    const rows = [3, 2, 1, 0, 6, 5, 4, 0, 9, 8, 7, 0, 12, 11, 10, 0];
    const aligned = x11ImageToScanlines(image({ width: 2, height: 2, bytesPerLine: 8, data: Buffer.from(rows) }));
    expect([...aligned]).toEqual([0, 1, 2, 3, 4, 5, 6, 0, 7, 8, 9, 10, 11, 12]);
    const unaligned = Buffer.from([0, ...rows]).subarray(1);
    expect([...x11ImageToScanlines(image({ width: 2, height: 2, bytesPerLine: 8, data: unaligned }))]).toEqual([...aligned]);
    const bigEndian = image({ width: 1, height: 1, littleEndian: false, data: Buffer.from([0, 1, 2, 3]) });
    expect([...x11ImageToScanlines(bigEndian)]).toEqual([0, 1, 2, 3]);
  });

  it('gives the same pixels on the four-at-a-time path as byte by byte', () => {
    const width = 8;
    const data = Buffer.alloc(width * 4 * 2);
    for (let i = 0; i < data.length; i++) data[i] = (i * 37 + 11) & 0xff;
    const fast = x11ImageToRgb(image({ width, height: 2, bytesPerLine: width * 4, data }));
    const slow = x11ImageToRgb(image({ width, height: 2, bytesPerLine: width * 4, data: Buffer.from([0, ...data]).subarray(1) }));
    expect([...fast.data]).toEqual([...slow.data]);
    expect([...fast.data.subarray(0, 3)]).toEqual([data[2], data[1], data[0]]);
    const scan = x11ImageToScanlines(image({ width, height: 2, bytesPerLine: width * 4, data }));
    expect([...scan.subarray(1, 1 + width * 3)]).toEqual([...slow.data.subarray(0, width * 3)]);
    expect(scan[1 + width * 3]).toBe(0);
  });

  it('refuses pixel sizes it cannot decode', () => {
    expect(() => x11ImageToRgb(image({ bitsPerPixel: 8, redMask: 0xe0 }))).toThrow(RangeError);
  });
});

describe('fitWidth and downscaleRgb', () => {
  it('caps the width keeping the aspect, never upscaling', () => {
    expect(fitWidth(1920, 1080, 640)).toEqual({ width: 640, height: 360 });
    expect(fitWidth(800, 600, 1600)).toEqual({ width: 800, height: 600 });
    expect(fitWidth(1000, 1, 10)).toEqual({ width: 10, height: 1 });
    expect(fitWidth(100, 50, undefined)).toEqual({ width: 100, height: 50 });
  });

  it('averages the covered area, fractional edges weighted', () => {
    // 4×2: left half black, right half white → 2×1: black, white.
    const data = Buffer.from([0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255]);
    expect([...downscaleRgb({ width: 4, height: 2, data }, 2, 1).data]).toEqual([0, 0, 0, 255, 255, 255]);
    // 3×1 → 2×1: each output covers 1.5 pixels.
    const three = Buffer.from([0, 0, 0, 90, 90, 90, 180, 180, 180]);
    expect([...downscaleRgb({ width: 3, height: 1, data: three }, 2, 1).data]).toEqual([30, 30, 30, 150, 150, 150]);
    const same = { width: 3, height: 1, data: three };
    expect(downscaleRgb(same, 3, 1)).toBe(same);
    expect(() => downscaleRgb(same, 4, 1)).toThrow(RangeError);
  });
});

describe('drawCursor', () => {
  it('blends premultiplied ARGB at the hotspot-adjusted position, clipped to the image', () => {
    const img = { width: 2, height: 2, data: Buffer.alloc(12, 100) };
    // 2×1 cursor, hotspot (1,0), at root (1,1) with origin (0,0): covers pixels (0,1) and (1,1).
    const argb = new Uint32Array([0xff0000ff, 0x80400000]);
    drawCursor(img, { x: 1, y: 1, width: 2, height: 1, xhot: 1, yhot: 0, argb });
    expect([...img.data.subarray(6, 9)]).toEqual([0, 0, 255]);
    expect([...img.data.subarray(9, 12)]).toEqual([64 + 50, 50, 50]);
    expect([...img.data.subarray(0, 6)]).toEqual([100, 100, 100, 100, 100, 100]);
    drawCursor(img, { x: -50, y: -50, width: 2, height: 1, xhot: 0, yhot: 0, argb });
  });
});
