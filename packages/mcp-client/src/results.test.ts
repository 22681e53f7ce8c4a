import type { CommandResult, Content } from '@capnode/capabilities';
import { describe, expect, test } from 'vitest';
import { estimateDecodedSize, MAX_BINARY_ITEMS, sniffDocumentExtension, sniffImageType, toModelResult, UPLOAD_EXTENSIONS, type BinaryStore } from './results.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]);
const GIF = Buffer.from('GIF89a....');
const WEBP = Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 ');

function memoryStore() {
  const files: { bytes: Uint8Array; extension: string }[] = [];
  const store: BinaryStore = {
    async write(bytes, extension) {
      files.push({ bytes, extension });
      return `/ws/uploads/${files.length}.${extension}`;
    },
  };
  return { files, store };
}

const ok = (content: unknown[]): CommandResult => ({ ok: true, content: content as Content[] });
const image = (bytes: Buffer | string, mimeType: string) => ({ type: 'image', data: typeof bytes === 'string' ? bytes : bytes.toString('base64'), mimeType });

test('sniffs PNG, JPEG, GIF and WebP', () => {
  expect([PNG, JPEG, GIF, WEBP].map((b) => sniffImageType(b))).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
  expect(sniffImageType(Buffer.from('BM....'))).toBeUndefined();
  expect(estimateDecodedSize(Buffer.alloc(100).toString('base64'))).toBe(100);
});

describe('toModelResult', () => {
  test('images are saved and replaced by their path, declared as attachments; annotations survive', async () => {
    const { files, store } = memoryStore();
    const result = await toModelResult(ok([{ type: 'text', text: 'hi' }, { ...image(PNG, 'image/PNG; charset=x'), annotations: { audience: ['user'] } }]), { store });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }, { type: 'text', text: '/ws/uploads/1.png', annotations: { audience: ['user'] } }]);
    expect(result.attachments).toEqual([{ type: 'image', path: '/ws/uploads/1.png', mimeType: 'image/png' }]);
    expect(Buffer.from(files[0]!.bytes).equals(PNG)).toBe(true);
    expect(JSON.stringify(result)).not.toContain(PNG.toString('base64'));
  });

  test('the extension comes from the bytes when the declared type is not a supported image, and must match them', async () => {
    const { store } = memoryStore();
    const sniffed = await toModelResult(ok([image(GIF, 'application/octet-stream')]), { store });
    expect(sniffed.attachments[0]).toMatchObject({ mimeType: 'image/gif', path: expect.stringMatching(/\.gif$/) });
    const mismatch = await toModelResult(ok([image(JPEG, 'image/png')]), { store });
    expect(mismatch.content[0]!.text).toMatch(/^\[attachment unavailable: image bytes do not match image\/png/);
    expect(mismatch.attachments).toEqual([]);
    const bmp = await toModelResult(ok([image(Buffer.from('BM....'), 'image/bmp')]), { store });
    expect(bmp.content[0]!.text).toMatch(/^\[attachment unavailable: unsupported image type image\/bmp/);
  });

  test('malformed images and audio never pass base64 on', async () => {
    const { files, store } = memoryStore();
    const audio = Buffer.from('RIFFxxxxWAVEfmt ').toString('base64');
    const result = await toModelResult(
      ok([image('', 'image/png'), { type: 'image', data: 42, mimeType: 'image/png' }, image('!!!not base64', 'image/png'), { type: 'audio', data: audio, mimeType: 'Audio/WAV; rate=1' }]),
      { store },
    );
    expect(result.content.map((c) => c.text)).toEqual([
      '[attachment unavailable: malformed image data]',
      '[attachment unavailable: malformed image data]',
      '[attachment unavailable: malformed image data]',
      '[audio attachment: audio/wav]',
    ]);
    expect(files).toEqual([]);
    expect(JSON.stringify(result)).not.toContain(audio);
  });

  test('resource blobs: documents get a [Document: …] marker, image blobs their path', async () => {
    const { store } = memoryStore();
    const result = await toModelResult(
      ok([
        { type: 'resource', resource: { uri: 'file:///r.pdf', mimeType: 'application/pdf', blob: Buffer.from('%PDF').toString('base64') } },
        { type: 'resource', resource: { uri: 'mem://x', mimeType: 'image/jpeg', blob: JPEG.toString('base64') } },
        { type: 'resource', resource: { uri: 'mem://t', text: 'plain text' } },
        { type: 'resource_link', uri: 'file:///a', name: 'a' },
      ]),
      { store },
    );
    expect(result.content[0]!.text).toBe('[Document: /ws/uploads/1.pdf (application/pdf, 4 bytes, from file:///r.pdf)]');
    expect(result.content[1]!.text).toBe('/ws/uploads/2.jpg');
    expect(result.content[2]!.text).toBe('plain text');
    expect(result.content[3]!.text).toBe('[resource link: a file:///a]');
    expect(result.attachments).toHaveLength(1);
  });

  test(`more than ${MAX_BINARY_ITEMS} binary items degrade every one and write nothing`, async () => {
    const { files, store } = memoryStore();
    const at64 = await toModelResult(ok(Array.from({ length: 64 }, () => image(PNG, 'image/png'))), { store });
    expect(at64.attachments).toHaveLength(64);
    files.length = 0;
    const at65 = await toModelResult(ok(Array.from({ length: 65 }, () => image(PNG, 'image/png'))), { store });
    expect(files).toEqual([]);
    expect(at65.attachments).toEqual([]);
    expect(at65.content.every((c) => c.text.startsWith('[attachment unavailable: 65 binary items'))).toBe(true);
  });

  test('about 10 MiB decoded in total degrades everything before anything is decoded; 10 MB per file', async () => {
    const { files, store } = memoryStore();
    const big = (size: number) => image(Buffer.concat([PNG, Buffer.alloc(size)]), 'image/png');
    const total = await toModelResult(ok([big(6 * 1024 * 1024), big(5 * 1024 * 1024)]), { store });
    expect(files).toEqual([]);
    expect(total.content.map((c) => c.text)).toEqual(Array(2).fill(expect.stringMatching(/exceeds the limit of 10 MiB/)));
    const single = await toModelResult(ok([big(10_000_001)]), { store });
    expect(files).toEqual([]);
    expect(single.content[0]!.text).toMatch(/exceeds the 10 MB per-file limit/);
  });

  test('without a store binary items degrade; errors are scrubbed and capped at 500 characters', async () => {
    const none = await toModelResult(ok([image(PNG, 'image/png')]));
    expect(none.content[0]!.text).toBe('[attachment unavailable: no workspace is configured for attachments]');
    const error = await toModelResult({ ok: false, error: { code: 'failed', message: `secret-xyz ${'e'.repeat(1000)}` } }, { scrub: (t) => t.replace('secret-xyz', '[redacted]') });
    expect(error.isError).toBe(true);
    expect(error.content[0]!.text).toHaveLength(500);
    expect(error.content[0]!.text.startsWith('[redacted]')).toBe(true);
  });

  test('a document takes its extension from its bytes, never from the server-given URI or declared type', async () => {
    const { files, store } = memoryStore();
    const blob = (uri: string, mimeType: string, bytes: Buffer) => ({ type: 'resource', resource: { uri, mimeType, blob: bytes.toString('base64') } });
    await toModelResult(
      ok([
        blob('file:///x.html', 'text/html', Buffer.from('<script>alert(1)</script>')),
        blob('file:///evil.sh', 'application/octet-stream', Buffer.from('#!/bin/sh\nrm -rf /')),
        blob('file:///a.exe', 'application/pdf', Buffer.from('not really a pdf')),
        blob('file:///doc', 'application/octet-stream', Buffer.from('%PDF-1.7')),
        blob('file:///z', 'application/octet-stream', Buffer.from([0x50, 0x4b, 0x03, 0x04, 1])),
        blob('file:///t.csv', 'text/csv', Buffer.from([0xff, 0xfe, 0x00])),
      ]),
      { store },
    );
    expect(files.map((file) => file.extension)).toEqual(['txt', 'bin', 'bin', 'pdf', 'zip', 'bin']);
    for (const file of files) expect(UPLOAD_EXTENSIONS.has(file.extension)).toBe(true);
  });

  test('results that did not come through the runtime are bounded too', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i += 1) deep = { a: deep };
    const result = await toModelResult({ ok: true, content: [{ type: 'text', text: 'x', _meta: deep }] as unknown as Content[], structured: deep as Record<string, unknown> });
    expect(() => JSON.stringify(result)).not.toThrow();
    expect(result.structuredContent).toBeUndefined();
    expect(result.content.map((item) => item.text)).toEqual(['x', '[capnode: structuredContent omitted: nested deeper than 32 levels]']);
  });
});

test('sniffDocumentExtension recognizes document signatures; text only when declared as text and valid UTF-8', () => {
  expect(sniffDocumentExtension(Buffer.from('GIF89a'), undefined)).toBe('gif');
  expect(sniffDocumentExtension(Buffer.from([0x1f, 0x8b, 8]), 'text/plain')).toBe('gz');
  expect(sniffDocumentExtension(Buffer.from('RIFF\u0000\u0000\u0000\u0000WAVEfmt '), undefined)).toBe('wav');
  expect(sniffDocumentExtension(Buffer.from('hello'), 'application/json')).toBe('txt');
  expect(sniffDocumentExtension(Buffer.from('hello'), undefined)).toBe('bin');
});
