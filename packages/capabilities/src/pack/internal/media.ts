import type { CommandSuccess, Content } from '../../content.js';
import { CapabilityError } from '../../errors.js';
import { delay as abortableDelay } from '@capnode/toolkit';

/**
 * Largest base64 media payload a command returns: OpenClaw's linux gateway node cap, which keeps a
 * result under the gateway's 25 MiB `maxPayload` with room for the envelope.
 */
export const MAX_MEDIA_BASE64_BYTES = 26_148_864;

/** Largest raw media (bytes before base64) that fits {@link MAX_MEDIA_BASE64_BYTES}. */
export const MAX_MEDIA_BYTES = Math.floor(MAX_MEDIA_BASE64_BYTES / 4) * 3;

/** Base64 length of `bytes` raw bytes. */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/**
 * Base64 of a media buffer, refused with `payload_too_large` (and how to shrink it) when its
 * base64 would pass {@link MAX_MEDIA_BASE64_BYTES}.
 */
export function toBoundedBase64(data: Uint8Array, what: string, howToShrink: string): string {
  const length = base64Length(data.byteLength);
  if (length > MAX_MEDIA_BASE64_BYTES) {
    throw new CapabilityError('payload_too_large', `${what} is ${length} bytes as base64, over the ${MAX_MEDIA_BASE64_BYTES}-byte limit; ${howToShrink}.`, {
      data: { bytes: length, limit: MAX_MEDIA_BASE64_BYTES },
    });
  }
  return (Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)).toString('base64');
}

/** JSON fields of a media result without the base64, for the text content readers see. */
function summary(fields: Record<string, unknown>): string {
  const { base64, ...rest } = fields;
  return JSON.stringify({ ...rest, base64Bytes: typeof base64 === 'string' ? base64.length : 0 });
}

/**
 * An image result: the canonical JSON fields (with `base64`) as structured data, the picture as MCP
 * `image` content, and a short text summary without the data.
 */
export function imageResult(fields: Record<string, unknown> & { base64: string }, mimeType: string): CommandSuccess {
  const content: Content[] = [
    { type: 'image', data: fields.base64, mimeType },
    { type: 'text', text: summary(fields) },
  ];
  return { ok: true, content, structured: fields };
}

/** A video result: the canonical JSON fields as structured data, the file as an embedded blob resource. */
export function videoResult(fields: Record<string, unknown> & { base64: string }, mimeType: string, uri: string): CommandSuccess {
  const content: Content[] = [
    { type: 'resource', resource: { uri, mimeType, blob: fields.base64 } },
    { type: 'text', text: summary(fields) },
  ];
  return { ok: true, content, structured: fields };
}

/** Waits `ms` milliseconds, or rejects `cancelled` when `signal` aborts first. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return abortableDelay(ms, { signal }).catch(() => {
    throw new CapabilityError('cancelled', 'The command was cancelled.');
  });
}
