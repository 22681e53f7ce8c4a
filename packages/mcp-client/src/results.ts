import type { CommandResult } from '@capnode/capabilities';
import { boundToolContent } from './internal/contentLimits.js';
import { isMcpClientError } from './errors.js';
import { capText } from './redact.js';

/** At most this many materializable binary items (resource blobs plus valid images) per result. */
export const MAX_BINARY_ITEMS = 64;
/** Estimated decoded size of all binary items of one result, checked before anything is decoded. */
export const MAX_BINARY_TOTAL_BYTES = 10 * 1024 * 1024;
/** Decoded size of one saved file. */
export const MAX_BINARY_FILE_BYTES = 10_000_000;

/** Raster formats a vision pipeline accepts; only these are saved as images. */
export type ImageMimeType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

/** A text item the model sees; annotations and `_meta` of the original item are kept. */
export interface ModelTextContent {
  readonly type: 'text';
  readonly text: string;
  readonly [extra: string]: unknown;
}

/** An image saved under the workspace, for the harness to lift into a native image part. */
export interface ImageAttachment {
  readonly type: 'image';
  readonly path: string;
  readonly mimeType: ImageMimeType;
}

/** A tool result as the model sees it: text only (binary replaced by references), plus attachments. */
export interface ModelToolResult {
  readonly content: readonly ModelTextContent[];
  readonly isError: boolean;
  readonly attachments: readonly ImageAttachment[];
  readonly structuredContent?: Record<string, unknown>;
}

/** Where binary payloads are written; `@capnode/mcp-client/node` provides one under `<workspace>/uploads/`. */
export interface BinaryStore {
  /** Saves the bytes with the given extension (no dot) and returns the saved path. */
  write(bytes: Uint8Array, extension: string): Promise<string>;
}

const EXTENSIONS: Record<ImageMimeType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };
/**
 * Every extension a saved file can get: the raster images above plus the document types recognized
 * from their bytes, and `txt` / `bin`. A server-given name, URI or declared type never picks one.
 */
export const UPLOAD_EXTENSIONS: ReadonlySet<string> = new Set(['png', 'jpg', 'webp', 'gif', 'pdf', 'zip', 'gz', 'bmp', 'tiff', 'mp3', 'wav', 'mp4', 'txt', 'bin']);

/** The essence of a MIME type: lower case, parameters dropped. */
export function mimeEssence(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const essence = value.split(';', 1)[0]!.trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence) ? essence : undefined;
}

function isImageMime(value: string | undefined): value is ImageMimeType {
  return value !== undefined && Object.hasOwn(EXTENSIONS, value);
}

/** Detects PNG, JPEG, WebP or GIF from the first bytes. */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | undefined {
  const at = (offset: number, ...values: number[]) => values.every((value, index) => bytes[offset + index] === value);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  return undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function normalizeBase64(data: string): string | undefined {
  const compact = /\s/.test(data) ? data.replace(/\s+/g, '') : data;
  if (compact.length % 4 === 1 || !BASE64.test(compact)) return undefined;
  return compact;
}

/** Decoded size of base64 text, without decoding it. */
export function estimateDecodedSize(base64: string): number {
  let padding = 0;
  if (base64.endsWith('==')) padding = 2;
  else if (base64.endsWith('=')) padding = 1;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

function decodeBase64(base64: string): Uint8Array {
  const buffer = (globalThis as { Buffer?: { from(data: string, encoding: 'base64'): Uint8Array } }).Buffer;
  if (buffer) return buffer.from(base64, 'base64');
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function describeSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${bytes} bytes`;
}

function cleanLabel(value: unknown, max = 200): string {
  return capText(String(value ?? '').replace(/[\u0000-\u001f\u007f\]]/g, ' '), max);
}

type RawItem = Record<string, unknown> & { type?: unknown };

interface BinaryCandidate {
  readonly index: number;
  readonly kind: 'image' | 'blob';
  readonly base64: string;
  readonly declared: string | undefined;
  readonly item: RawItem;
  readonly uri?: string;
}

function extrasOf(item: RawItem, drop: readonly string[]): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const key of ['annotations', '_meta']) if (item[key] !== undefined && !drop.includes(key)) extras[key] = item[key];
  return extras;
}

export interface ModelResultOptions {
  /** Where binary payloads go; without it every binary item becomes `[attachment unavailable: …]`. */
  readonly store?: BinaryStore;
  /** Applied to error text before it is capped at 500 characters. */
  readonly scrub?: (text: string) => string;
}

/**
 * Turns a pipeline result into what the model sees. Base64 never passes through: images (PNG, JPEG,
 * WebP, GIF; extension from the declared type or the bytes, and it must match the bytes) and resource
 * blobs (extension from their bytes, {@link UPLOAD_EXTENSIONS}; never from a name or URI) are saved through `store` and replaced by the saved path (images, also declared as
 * attachments) or a `[Document: …]` marker; audio becomes `[audio attachment: <mime>]`; anything else
 * becomes `[attachment unavailable: …]`. Per result at most 64 binary items and about 10 MiB decoded
 * in total, checked before decoding: over either bound every binary item is degraded and nothing is
 * written. 10 MB per file. Error text is scrubbed and capped at 500 characters.
 */
export async function toModelResult(result: CommandResult, options: ModelResultOptions = {}): Promise<ModelToolResult> {
  const scrub = options.scrub ?? ((text: string) => text);
  if (!result.ok) {
    return { content: [{ type: 'text', text: capText(scrub(result.error.message)) }], isError: true, attachments: [] };
  }
  // Bounds annotations, `_meta`, item fields and structured content again for results that did not
  // come through the runtime; text is left as it is (the runtime already cut it).
  const bounded = boundToolContent(result.content, result.structured, Number.POSITIVE_INFINITY);
  const items = bounded.content as readonly RawItem[];
  const out: (ModelTextContent | undefined)[] = new Array(items.length);
  const candidates: BinaryCandidate[] = [];

  items.forEach((item, index) => {
    const type = item?.type;
    if (type === 'text') {
      out[index] = { ...extrasOf(item, []), type: 'text', text: typeof item.text === 'string' ? item.text : '' };
    } else if (type === 'image') {
      const base64 = typeof item.data === 'string' && item.data.length > 0 ? normalizeBase64(item.data) : undefined;
      if (base64 === undefined || base64.length === 0) out[index] = { ...extrasOf(item, []), type: 'text', text: '[attachment unavailable: malformed image data]' };
      else candidates.push({ index, kind: 'image', base64, declared: mimeEssence(item.mimeType), item });
    } else if (type === 'audio') {
      out[index] = { ...extrasOf(item, []), type: 'text', text: `[audio attachment: ${mimeEssence(item.mimeType) ?? 'unknown type'}]` };
    } else if (type === 'resource') {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      const uri = cleanLabel(resource.uri);
      if (typeof resource.text === 'string') {
        out[index] = { ...extrasOf(item, []), type: 'text', text: resource.text };
      } else if (resource.blob !== undefined) {
        const base64 = typeof resource.blob === 'string' ? normalizeBase64(resource.blob) : undefined;
        if (base64 === undefined) out[index] = { ...extrasOf(item, []), type: 'text', text: `[attachment unavailable: malformed blob for ${uri}]` };
        else candidates.push({ index, kind: 'blob', base64, declared: mimeEssence(resource.mimeType), item, uri });
      } else {
        out[index] = { ...extrasOf(item, []), type: 'text', text: `[resource ${uri}]` };
      }
    } else if (type === 'resource_link') {
      out[index] = { ...extrasOf(item, []), type: 'text', text: `[resource link: ${cleanLabel(item.name)} ${cleanLabel(item.uri)}]` };
    } else {
      out[index] = { type: 'text', text: `[unsupported content: ${cleanLabel(type, 40)}]` };
    }
  });

  const attachments: ImageAttachment[] = [];
  const total = candidates.reduce((sum, candidate) => sum + estimateDecodedSize(candidate.base64), 0);
  let overall: string | undefined;
  if (candidates.length > MAX_BINARY_ITEMS) overall = `${candidates.length} binary items in one result exceed the limit of ${MAX_BINARY_ITEMS}`;
  else if (total > MAX_BINARY_TOTAL_BYTES) overall = `about ${describeSize(total)} of binary data in one result exceeds the limit of 10 MiB`;
  else if (candidates.length > 0 && !options.store) overall = 'no workspace is configured for attachments';

  for (const candidate of candidates) {
    const extras = extrasOf(candidate.item, []);
    if (overall) {
      out[candidate.index] = { ...extras, type: 'text', text: `[attachment unavailable: ${overall}]` };
      continue;
    }
    out[candidate.index] = { ...extras, type: 'text', text: await materialize(candidate, options.store!, attachments) };
  }
  return {
    content: out.filter((item): item is ModelTextContent => item !== undefined),
    isError: false,
    attachments,
    ...(bounded.structuredContent === undefined ? {} : { structuredContent: bounded.structuredContent }),
  };
}

async function materialize(candidate: BinaryCandidate, store: BinaryStore, attachments: ImageAttachment[]): Promise<string> {
  const size = estimateDecodedSize(candidate.base64);
  const label = candidate.uri ? ` (${candidate.uri})` : '';
  if (size > MAX_BINARY_FILE_BYTES) return `[attachment unavailable: ${describeSize(size)}${label} exceeds the 10 MB per-file limit]`;
  const head = decodeBase64(candidate.base64.slice(0, 24).replace(/=+$/, '').slice(0, 16));
  const sniffed = sniffImageType(head);
  const declaredImage = isImageMime(candidate.declared) ? candidate.declared : undefined;
  const wantsImage = candidate.kind === 'image' || declaredImage !== undefined;

  if (wantsImage) {
    const type = declaredImage ?? (candidate.kind === 'image' ? sniffed : undefined);
    if (type === undefined) return `[attachment unavailable: unsupported image type ${candidate.declared ?? 'unknown'}${label}]`;
    if (sniffed !== type) return `[attachment unavailable: image bytes do not match ${type}${label}]`;
    try {
      const path = await store.write(decodeBase64(candidate.base64), EXTENSIONS[type]);
      attachments.push({ type: 'image', path, mimeType: type });
      return path;
    } catch (error) {
      return `[attachment unavailable: the image could not be saved${label}${unsafeReason(error)}]`;
    }
  }

  try {
    const bytes = decodeBase64(candidate.base64);
    const path = await store.write(bytes, sniffDocumentExtension(bytes, candidate.declared));
    return `[Document: ${path} (${candidate.declared ?? 'application/octet-stream'}, ${describeSize(bytes.length)}${candidate.uri ? `, from ${candidate.uri}` : ''})]`;
  } catch (error) {
    return `[attachment unavailable: the document could not be saved${label}${unsafeReason(error)}]`;
  }
}

function unsafeReason(error: unknown): string {
  return isMcpClientError(error) && error.code === 'unsafe_path' ? `: ${cleanLabel(error.message, 300)}` : '';
}

/** The extension of a document from its first bytes; text declared as text and valid UTF-8 becomes `txt`. */
export function sniffDocumentExtension(bytes: Uint8Array, declared: string | undefined): string {
  const at = (offset: number, ...values: number[]) => values.every((value, index) => bytes[offset + index] === value);
  const image = sniffImageType(bytes);
  if (image) return EXTENSIONS[image];
  if (at(0, 0x25, 0x50, 0x44, 0x46)) return 'pdf';
  if (at(0, 0x50, 0x4b, 0x03, 0x04) || at(0, 0x50, 0x4b, 0x05, 0x06)) return 'zip';
  if (at(0, 0x1f, 0x8b)) return 'gz';
  if (at(0, 0x42, 0x4d) && bytes.length >= 14) return 'bmp';
  if (at(0, 0x49, 0x49, 0x2a, 0x00) || at(0, 0x4d, 0x4d, 0x00, 0x2a)) return 'tiff';
  if (at(0, 0x49, 0x44, 0x33) || (bytes[0] === 0xff && [0xfb, 0xf3, 0xf2].includes(bytes[1] ?? 0))) return 'mp3';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x41, 0x56, 0x45)) return 'wav';
  if (at(4, 0x66, 0x74, 0x79, 0x70)) return 'mp4';
  const textual = declared !== undefined && (declared.startsWith('text/') || declared === 'application/json' || declared === 'application/xml');
  if (textual && isUtf8Text(bytes)) return 'txt';
  return 'bin';
}

function isUtf8Text(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
