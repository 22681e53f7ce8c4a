import { Buffer } from 'node:buffer';
import type { RgbImage } from './png.js';
import type { X11Cursor, X11Image } from './x11.js';

function maskShift(mask: number): { shift: number; bits: number } {
  if (mask === 0) return { shift: 0, bits: 0 };
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  let bits = 0;
  while (((mask >>> (shift + bits)) & 1) === 1) bits++;
  return { shift, bits };
}

function channel(pixel: number, mask: { shift: number; bits: number }): number {
  if (mask.bits === 0) return 0;
  const value = (pixel >>> mask.shift) & ((1 << mask.bits) - 1);
  return mask.bits >= 8 ? value >>> (mask.bits - 8) : Math.round((value * 255) / ((1 << mask.bits) - 1));
}

function isBgrx(image: X11Image): boolean {
  return image.bitsPerPixel === 32 && image.littleEndian && image.redMask === 0xff0000 && image.greenMask === 0xff00 && image.blueMask === 0xff;
}

/**
 * Writes the rows of a 32-bit BGRX image as RGB into `out`, each row starting `rowStart(y)`
 * bytes in; reads whole pixels as 32-bit words when the data is aligned.
 */
function bgrxRows(image: X11Image, out: Buffer, rowStart: (y: number) => number): void {
  const { width, height, data, bytesPerLine } = image;
  const aligned = data.byteOffset % 4 === 0 && bytesPerLine % 4 === 0;
  const words = aligned ? new Uint32Array(data.buffer, data.byteOffset, (bytesPerLine / 4) * height) : undefined;
  if (words && width % 4 === 0) {
    // Four pixels at a time into an aligned row of words (3 stores instead of 12), then one copy.
    const row = new Uint32Array((width * 3) / 4);
    const rowBytes = Buffer.from(row.buffer, row.byteOffset, row.byteLength);
    const stride = bytesPerLine / 4;
    for (let y = 0; y < height; y++) {
      let w = y * stride;
      for (let o = 0; o < row.length; o += 3, w += 4) {
        const p0 = words[w]!;
        const p1 = words[w + 1]!;
        const p2 = words[w + 2]!;
        const p3 = words[w + 3]!;
        row[o] = ((p0 >>> 16) & 0xff) | (p0 & 0xff00) | ((p0 & 0xff) << 16) | (((p1 >>> 16) & 0xff) << 24);
        row[o + 1] = ((p1 >>> 8) & 0xff) | ((p1 & 0xff) << 8) | (p2 & 0xff0000) | (((p2 >>> 8) & 0xff) << 24);
        row[o + 2] = (p2 & 0xff) | (((p3 >>> 16) & 0xff) << 8) | ((p3 & 0xff00) << 8) | ((p3 & 0xff) << 24);
      }
      rowBytes.copy(out, rowStart(y));
    }
    return;
  }
  for (let y = 0; y < height; y++) {
    let o = rowStart(y);
    if (words) {
      let w = y * (bytesPerLine / 4);
      const end = w + width;
      for (; w < end; w++) {
        const pixel = words[w]!;
        out[o++] = pixel >>> 16;
        out[o++] = pixel >>> 8;
        out[o++] = pixel;
      }
    } else {
      let i = y * bytesPerLine;
      const end = i + width * 4;
      for (; i < end; i += 4) {
        out[o++] = data[i + 2]!;
        out[o++] = data[i + 1]!;
        out[o++] = data[i]!;
      }
    }
  }
}

/** Bytes of the PNG scanlines of a `width`×`height` RGB image (a filter byte per row). */
export function pngScanlineBytes(width: number, height: number): number {
  return (width * 3 + 1) * height;
}

/**
 * PNG scanlines (filter byte 0, then RGB) straight from a ZPixmap image, in one pass: the fast
 * path of a full-size PNG screenshot. Other layouts go through {@link x11ImageToRgb}. They are
 * written into `into` when it is large enough (the result is then a view of it).
 */
export function x11ImageToScanlines(image: X11Image, into?: Buffer): Buffer {
  const rowBytes = image.width * 3 + 1;
  const bytes = pngScanlineBytes(image.width, image.height);
  const out = into !== undefined && into.length >= bytes ? into.subarray(0, bytes) : Buffer.allocUnsafe(bytes);
  if (isBgrx(image)) {
    for (let y = 0; y < image.height; y++) out[y * rowBytes] = 0;
    bgrxRows(image, out, (y) => y * rowBytes + 1);
    return out;
  }
  const rgb = x11ImageToRgb(image);
  for (let y = 0; y < image.height; y++) {
    out[y * rowBytes] = 0;
    rgb.data.copy(out, y * rowBytes + 1, y * (rowBytes - 1), (y + 1) * (rowBytes - 1));
  }
  return out;
}

/**
 * Decodes a ZPixmap image (TrueColor, 16/24/32 bits per pixel, either byte order) to packed RGB.
 * The common 32-bit little-endian BGRX layout takes a fast path.
 */
export function x11ImageToRgb(image: X11Image): RgbImage {
  const { width, height, data, bytesPerLine } = image;
  const out = Buffer.allocUnsafe(width * height * 3);
  if (isBgrx(image)) {
    bgrxRows(image, out, (y) => y * width * 3);
    return { width, height, data: out };
  }
  const bytes = image.bitsPerPixel / 8;
  if (![2, 3, 4].includes(bytes)) throw new RangeError(`Unsupported pixel size: ${image.bitsPerPixel} bits.`);
  const red = maskShift(image.redMask);
  const green = maskShift(image.greenMask);
  const blue = maskShift(image.blueMask);
  let o = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * bytesPerLine + x * bytes;
      let pixel = 0;
      for (let b = 0; b < bytes; b++) pixel |= data[at + (image.littleEndian ? b : bytes - 1 - b)]! << (8 * b);
      pixel >>>= 0;
      out[o++] = channel(pixel, red);
      out[o++] = channel(pixel, green);
      out[o++] = channel(pixel, blue);
    }
  }
  return { width, height, data: out };
}

/**
 * Draws the pointer (premultiplied ARGB, XFIXES) over an RGB image whose top-left corner is at
 * (`originX`, `originY`) in root coordinates.
 */
export function drawCursor(image: RgbImage, cursor: X11Cursor, originX = 0, originY = 0): void {
  const left = cursor.x - cursor.xhot - originX;
  const top = cursor.y - cursor.yhot - originY;
  for (let cy = 0; cy < cursor.height; cy++) {
    const y = top + cy;
    if (y < 0 || y >= image.height) continue;
    for (let cx = 0; cx < cursor.width; cx++) {
      const x = left + cx;
      if (x < 0 || x >= image.width) continue;
      const argb = cursor.argb[cy * cursor.width + cx]!;
      const alpha = argb >>> 24;
      if (alpha === 0) continue;
      const at = (y * image.width + x) * 3;
      const inverse = 255 - alpha;
      image.data[at] = Math.min(255, ((argb >>> 16) & 0xff) + Math.round((image.data[at]! * inverse) / 255));
      image.data[at + 1] = Math.min(255, ((argb >>> 8) & 0xff) + Math.round((image.data[at + 1]! * inverse) / 255));
      image.data[at + 2] = Math.min(255, (argb & 0xff) + Math.round((image.data[at + 2]! * inverse) / 255));
    }
  }
}

/** The size an image gets when its width is capped at `maxWidth` (aspect kept, never upscaled). */
export function fitWidth(width: number, height: number, maxWidth: number | undefined): { width: number; height: number } {
  if (maxWidth === undefined || width <= maxWidth) return { width, height };
  return { width: maxWidth, height: Math.max(1, Math.round((height * maxWidth) / width)) };
}

/**
 * Downscales an RGB image by area averaging (each output pixel is the mean of the source pixels
 * it covers, with fractional edges weighted), which keeps text legible at small sizes.
 */
export function downscaleRgb(image: RgbImage, width: number, height: number): RgbImage {
  if (width === image.width && height === image.height) return image;
  if (width > image.width || height > image.height) throw new RangeError('downscaleRgb only shrinks.');
  const sx = image.width / width;
  const sy = image.height / height;
  const out = Buffer.allocUnsafe(width * height * 3);
  // Column spans and weights are the same for every row: compute them once.
  const x0s = new Int32Array(width);
  const x1s = new Int32Array(width);
  const xWeights: Float64Array[] = [];
  for (let x = 0; x < width; x++) {
    const start = x * sx;
    const end = start + sx;
    const first = Math.floor(start);
    const last = Math.min(image.width - 1, Math.ceil(end) - 1);
    x0s[x] = first;
    x1s[x] = last;
    const weights = new Float64Array(last - first + 1);
    for (let i = first; i <= last; i++) weights[i - first] = Math.min(end, i + 1) - Math.max(start, i);
    xWeights.push(weights);
  }
  const accumulator = new Float64Array(width * 3);
  for (let y = 0; y < height; y++) {
    accumulator.fill(0);
    const start = y * sy;
    const end = start + sy;
    const first = Math.floor(start);
    const last = Math.min(image.height - 1, Math.ceil(end) - 1);
    for (let row = first; row <= last; row++) {
      const wy = Math.min(end, row + 1) - Math.max(start, row);
      const base = row * image.width * 3;
      for (let x = 0; x < width; x++) {
        const weights = xWeights[x]!;
        const x0 = x0s[x]!;
        let r = 0;
        let g = 0;
        let b = 0;
        for (let i = 0; i <= x1s[x]! - x0; i++) {
          const at = base + (x0 + i) * 3;
          const w = weights[i]!;
          r += image.data[at]! * w;
          g += image.data[at + 1]! * w;
          b += image.data[at + 2]! * w;
        }
        accumulator[x * 3] = accumulator[x * 3]! + r * wy;
        accumulator[x * 3 + 1] = accumulator[x * 3 + 1]! + g * wy;
        accumulator[x * 3 + 2] = accumulator[x * 3 + 2]! + b * wy;
      }
    }
    const area = sx * sy;
    const o = y * width * 3;
    for (let i = 0; i < width * 3; i++) out[o + i] = Math.min(255, Math.round(accumulator[i]! / area));
  }
  return { width, height, data: out };
}
