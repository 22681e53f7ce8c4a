import { MAX_MEDIA_BYTES } from './media.js';

/** Bytes `fs.read` returns unless asked for fewer or more. */
export const DEFAULT_READ_BYTES = 256 * 1024;
/** Most bytes one `fs.read` returns: what fits the media result bound as base64. */
export const MAX_READ_BYTES = MAX_MEDIA_BYTES;
/** Largest content `fs.write` takes, in bytes (under the MCP HTTP listener's 4 MiB body limit, base64 included). */
export const MAX_WRITE_BYTES = 2 * 1024 * 1024;
/** Most entries `fs.list` returns. */
export const MAX_LIST_ENTRIES = 10_000;
/** Deepest `fs.list` goes. */
export const MAX_LIST_DEPTH = 32;
