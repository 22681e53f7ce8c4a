import { describe, expect, it } from 'vitest';
import { base64Length, delay, imageResult, MAX_MEDIA_BASE64_BYTES, MAX_MEDIA_BYTES, toBoundedBase64, videoResult } from './media.js';

describe('media bounds', () => {
  it('allows base64 up to 26,148,864 bytes and refuses one byte more with how to shrink', () => {
    expect(MAX_MEDIA_BASE64_BYTES).toBe(26_148_864);
    expect(base64Length(MAX_MEDIA_BYTES)).toBe(MAX_MEDIA_BASE64_BYTES);
    expect(toBoundedBase64(Buffer.alloc(MAX_MEDIA_BYTES), 'The screenshot', 'shrink it').length).toBe(MAX_MEDIA_BASE64_BYTES);
    let error: unknown;
    try {
      toBoundedBase64(Buffer.alloc(MAX_MEDIA_BYTES + 1), 'The screenshot', 'pass a smaller maxWidth');
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'payload_too_large', data: { bytes: MAX_MEDIA_BASE64_BYTES + 4, limit: MAX_MEDIA_BASE64_BYTES } });
    expect((error as Error).message).toMatch(/over the 26148864-byte limit; pass a smaller maxWidth/);
  });

  it('takes any byte view, not only a Buffer (speech audio, clipboard images)', () => {
    const bytes = new Uint8Array([0, 104, 105, 0]);
    expect(toBoundedBase64(bytes.subarray(1, 3), 'x', 'y')).toBe('aGk=');
    expect(() => toBoundedBase64(new Uint8Array(MAX_MEDIA_BYTES + 3), 'The image', 'send less')).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
  });

  it('carries media both as JSON fields and as MCP content, the text without the data', () => {
    const image = imageResult({ format: 'png', base64: 'AAAA', width: 1, height: 1 }, 'image/png');
    expect(image.structured).toEqual({ format: 'png', base64: 'AAAA', width: 1, height: 1 });
    expect(image.content[0]).toEqual({ type: 'image', data: 'AAAA', mimeType: 'image/png' });
    expect(JSON.parse((image.content[1] as { text: string }).text)).toEqual({ format: 'png', width: 1, height: 1, base64Bytes: 4 });
    const video = videoResult({ format: 'mp4', base64: 'BBBB' }, 'video/mp4', 'capnode://x.mp4');
    expect(video.content[0]).toEqual({ type: 'resource', resource: { uri: 'capnode://x.mp4', mimeType: 'video/mp4', blob: 'BBBB' } });
  });

  it('delay waits, and rejects cancelled on abort', async () => {
    await delay(1, new AbortController().signal);
    const controller = new AbortController();
    const waiting = delay(60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'cancelled' });
  });
});
