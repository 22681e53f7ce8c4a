import { Buffer } from 'node:buffer';
import zlib from 'node:zlib';
import { promisify } from 'node:util';

/** Tightly packed 8-bit RGB pixels, row by row. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  /** `width * height * 3` bytes. */
  readonly data: Buffer;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const deflate = promisify(zlib.deflate);

let crcTable: Uint32Array | undefined;

/** CRC-32 (PNG's, zlib's); `zlib.crc32` where Node has it. */
export function crc32(data: Uint8Array): number {
  const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  if (native) return native(data) >>> 0;
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'latin1');
  body.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

/** PNG scanlines (filter type 0, none) of an RGB image: each row prefixed by its filter byte. */
export function pngScanlines(image: RgbImage): Buffer {
  const rowBytes = image.width * 3;
  const raw = Buffer.allocUnsafe(image.height * (rowBytes + 1));
  for (let y = 0; y < image.height; y++) {
    const at = y * (rowBytes + 1);
    raw[at] = 0;
    image.data.copy(raw, at + 1, y * rowBytes, (y + 1) * rowBytes);
  }
  return raw;
}

export interface EncodePngOptions {
  /** zlib level 0..9; default 1 (fast: a screenshot is sent at once, not archived). */
  readonly level?: number;
}

/** Assembles a PNG from already-compressed scanlines (IHDR, one IDAT, IEND). */
export function assemblePng(width: number, height: number, idat: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(2, 9); // colour type: truecolour
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Encodes an RGB image as an 8-bit truecolour PNG with node:zlib (off the main thread), filter none
 * and a fast level, which for screen content is both quick and small.
 */
export async function encodePng(image: RgbImage, options: EncodePngOptions = {}): Promise<Buffer> {
  if (image.data.length !== image.width * image.height * 3) throw new RangeError(`RGB data is ${image.data.length} bytes, expected ${image.width * image.height * 3}.`);
  return encodePngScanlines(image.width, image.height, pngScanlines(image), options);
}

/**
 * Compresses ready PNG scanlines (see {@link pngScanlines}) and assembles the file. The deflate runs
 * on the thread pool in large chunks (few thread hops), so the event loop stays free.
 */
export async function encodePngScanlines(width: number, height: number, scanlines: Buffer, options: EncodePngOptions = {}): Promise<Buffer> {
  if (scanlines.length !== height * (width * 3 + 1)) throw new RangeError(`PNG scanlines are ${scanlines.length} bytes, expected ${height * (width * 3 + 1)}.`);
  const chunkSize = Math.min(32 << 20, Math.max(64 << 10, scanlines.length >> 2));
  const idat = await deflate(scanlines, { level: options.level ?? 1, chunkSize });
  return assemblePng(width, height, idat);
}

/** {@link encodePngScanlines} in one synchronous deflate call (no thread-pool hop). */
export function encodePngScanlinesSync(width: number, height: number, scanlines: Buffer, options: EncodePngOptions = {}): Buffer {
  if (scanlines.length !== height * (width * 3 + 1)) throw new RangeError(`PNG scanlines are ${scanlines.length} bytes, expected ${height * (width * 3 + 1)}.`);
  return assemblePng(width, height, zlib.deflateSync(scanlines, { level: options.level ?? 1 }));
}

/** Width and height from a PNG's IHDR, or `undefined` when `data` is no PNG. */
export function pngSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length < 24 || !data.subarray(0, 8).equals(SIGNATURE) || data.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** Width and height from a JPEG's first SOF marker, or `undefined` when `data` is no JPEG. */
export function jpegSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 9 < data.length) {
    if (data[at] !== 0xff) return undefined;
    const marker = data[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = data.readUInt16BE(at + 2);
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) return { height: data.readUInt16BE(at + 5), width: data.readUInt16BE(at + 7) };
    at += 2 + length;
  }
  return undefined;
}
