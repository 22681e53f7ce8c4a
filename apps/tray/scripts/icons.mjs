#!/usr/bin/env node
// Draws the tray's three icons (ok / attention / error) as PNG (Linux, macOS) and ICO (Windows, PNG inside)
// into ../assets/. Pure Node (zlib), nothing downloaded: `node apps/tray/scripts/icons.mjs`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function encodePng(size, pixel) {
  const stride = size * 4 + 1;
  const raw = Buffer.alloc(stride * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) raw.set(pixel(x, y), y * stride + 1 + x * 4);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  const signature = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

/** Coverage of a pixel by a shape, 4×4 supersampled, for smooth edges. */
function coverage(x, y, inside) {
  let hits = 0;
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) if (inside(x + (i + 0.5) / 4, y + (j + 0.5) / 4)) hits++;
  return hits / 16;
}

const GLYPHS = {
  // A check mark: two thick strokes.
  ok: (u, v) => segment(u, v, 0.28, 0.52, 0.44, 0.68, 0.09) || segment(u, v, 0.44, 0.68, 0.73, 0.34, 0.09),
  // An exclamation mark.
  attention: (u, v) => (Math.abs(u - 0.5) < 0.08 && v > 0.22 && v < 0.6) || Math.hypot(u - 0.5, v - 0.74) < 0.085,
  // A cross.
  error: (u, v) => segment(u, v, 0.32, 0.32, 0.68, 0.68, 0.09) || segment(u, v, 0.68, 0.32, 0.32, 0.68, 0.09),
};

function segment(u, v, x1, y1, x2, y2, width) {
  const dx = x2 - x1;
  const dy = y2 - y1;
  const t = Math.max(0, Math.min(1, ((u - x1) * dx + (v - y1) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(u - (x1 + t * dx), v - (y1 + t * dy)) < width;
}

const COLORS = { ok: [46, 160, 67], attention: [230, 160, 0], error: [210, 45, 45] };

function drawIcon(state, size) {
  const [r, g, b] = COLORS[state];
  const glyph = GLYPHS[state];
  return encodePng(size, (x, y) => {
    const disc = coverage(x, y, (px, py) => Math.hypot(px / size - 0.5, py / size - 0.5) < 0.47);
    const mark = coverage(x, y, (px, py) => glyph(px / size, py / size));
    const mix = (channel) => Math.round(channel * (1 - mark) + 255 * mark);
    return [mix(r), mix(g), mix(b), Math.round(255 * disc)];
  });
}

/** An ICO holding PNG images (Windows Vista and later read these). */
function encodeIco(images) {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  let offset = 6 + 16 * images.length;
  const entries = images.map(({ size, png }) => {
    const entry = Buffer.alloc(16);
    entry[0] = size >= 256 ? 0 : size;
    entry[1] = size >= 256 ? 0 : size;
    entry.writeUInt16LE(1, 4); // colour planes
    entry.writeUInt16LE(32, 6); // bits per pixel
    entry.writeUInt32LE(png.length, 8);
    entry.writeUInt32LE(offset, 12);
    offset += png.length;
    return entry;
  });
  return Buffer.concat([header, ...entries, ...images.map((image) => image.png)]);
}

const assets = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets');
mkdirSync(assets, { recursive: true });
for (const state of Object.keys(COLORS)) {
  writeFileSync(join(assets, `${state}.png`), drawIcon(state, 32));
  writeFileSync(join(assets, `${state}.ico`), encodeIco([16, 32].map((size) => ({ size, png: drawIcon(state, size) }))));
}
process.stdout.write(`icons written to ${assets}\n`);
