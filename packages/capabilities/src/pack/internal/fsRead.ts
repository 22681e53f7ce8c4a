import type { FileHandle } from 'node:fs/promises';
import { CapabilityError } from '../../errors.js';

/** Bytes read per step while lines are counted. */
const CHUNK_BYTES = 64 * 1024;
/** Bytes sniffed for a NUL to tell binary from text. */
export const SNIFF_BYTES = 8192;

/**
 * Length of the longest prefix of `data` that ends on a whole UTF-8 character: a read cut at a byte
 * bound still decodes to an exact prefix of the file's text.
 */
export function utf8Boundary(data: Uint8Array, end = data.length): number {
  let start = end;
  // Step back over at most 3 continuation bytes to the lead byte of the last character.
  while (start > 0 && end - start < 4 && (data[start - 1]! & 0xc0) === 0x80) start--;
  if (start === 0) return end;
  const lead = data[start - 1]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return end - (start - 1) >= need ? end : start - 1;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** True when `data` is text: no NUL in its first {@link SNIFF_BYTES}, and valid UTF-8 (a character cut at its end allowed). */
export function looksLikeText(data: Uint8Array): boolean {
  if (data.subarray(0, SNIFF_BYTES).includes(0)) return false;
  try {
    decoder.decode(data.subarray(0, utf8Boundary(data)));
    return true;
  } catch {
    return false;
  }
}

/** Lines of a text read with a range. */
export interface LineRangeRead {
  readonly text: string;
  readonly bytes: number;
  /** First line returned (1-based). */
  readonly startLine: number;
  /** Last line returned, whole or (when truncated) in part; `startLine - 1` when none was. */
  readonly endLine: number;
  /** The range went on past `maxBytes`: `text` is its exact prefix. */
  readonly truncated: boolean;
  /** Lines in the file, when it was read to its end. */
  readonly totalLines?: number;
}

/**
 * Reads lines `startLine`..`endLine` (1-based, inclusive; `endLine` undefined: to the end) of the
 * file, streaming, so only the range is held; the range's bytes stop at `maxBytes` on a character
 * boundary, marked truncated.
 */
export async function readLineRange(handle: FileHandle, startLine: number, endLine: number | undefined, maxBytes: number, signal?: AbortSignal): Promise<LineRangeRead> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const out: Buffer[] = [];
  let outBytes = 0;
  let line = 1;
  let position = 0;
  let truncated = false;
  let lastLine = startLine - 1;
  let ended = false;
  let sawByteOnLine = false;
  reading: for (;;) {
    if (signal?.aborted) throw new CapabilityError('cancelled', 'The read was cancelled.');
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) {
      ended = true;
      break;
    }
    position += bytesRead;
    const view = chunk.subarray(0, bytesRead);
    let from = 0;
    while (from < bytesRead) {
      const newline = view.indexOf(10, from);
      const stop = newline < 0 ? bytesRead : newline + 1;
      if (line >= startLine && (endLine === undefined || line <= endLine)) {
        const piece = view.subarray(from, stop);
        if (outBytes + piece.length > maxBytes) {
          out.push(Buffer.from(piece.subarray(0, maxBytes - outBytes)));
          outBytes = maxBytes;
          lastLine = line;
          truncated = true;
          break reading;
        }
        out.push(Buffer.from(piece));
        outBytes += piece.length;
        lastLine = line;
      }
      if (newline < 0) sawByteOnLine = true;
      else {
        line++;
        sawByteOnLine = false;
      }
      from = stop;
      if (endLine !== undefined && line > endLine) break reading;
    }
  }
  let data = Buffer.concat(out, outBytes);
  if (truncated) data = data.subarray(0, utf8Boundary(data));
  const totalLines = ended ? line - (sawByteOnLine ? 0 : 1) : undefined;
  return { text: data.toString('utf8'), bytes: data.length, startLine, endLine: lastLine, truncated, ...(totalLines === undefined ? {} : { totalLines }) };
}
