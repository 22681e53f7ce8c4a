/**
 * The last `capacity` bytes of one output stream, addressed by absolute byte offsets: offset 0 is the
 * stream's first byte ever written, `total` the offset after its last. Older bytes are dropped as new
 * ones arrive; `start` is the offset of the oldest byte still kept.
 */
export class OutputRing {
  private chunks: Buffer[] = [];
  private kept = 0;
  /** Bytes ever written to the stream. */
  total = 0;

  constructor(readonly capacity: number) {}

  /** Offset of the oldest byte still kept. */
  get start(): number {
    return this.total - this.kept;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    if (chunk.length >= this.capacity) {
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.capacity))];
      this.kept = this.capacity;
      return;
    }
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept > this.capacity) {
      const first = this.chunks[0]!;
      const excess = this.kept - this.capacity;
      if (first.length <= excess) {
        this.chunks.shift();
        this.kept -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.kept -= excess;
      }
    }
  }

  /** The kept bytes in `[from, to)`; both offsets must lie within `[start, total]`. */
  slice(from: number, to: number): Buffer {
    const parts: Buffer[] = [];
    let offset = this.start;
    for (const chunk of this.chunks) {
      const end = offset + chunk.length;
      if (end > from && offset < to) parts.push(chunk.subarray(Math.max(0, from - offset), Math.min(chunk.length, to - offset)));
      offset = end;
      if (offset >= to) break;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

/** What one read of a stream returns. */
export interface StreamRead {
  /** The bytes read, decoded as UTF-8 (whole characters; see {@link readRing}). */
  readonly text: string;
  /** Offset of the first byte returned. */
  readonly cursor: number;
  /** Offset to pass as the cursor of the next read. */
  readonly nextCursor: number;
  /** The read stopped at `maxBytes` with more output available: `text` is an exact prefix of it. */
  readonly truncated: boolean;
  /** Bytes between the requested cursor and `cursor` that the ring no longer holds. */
  readonly droppedBytes: number;
  /** Bytes the stream has written so far. */
  readonly totalBytes: number;
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) === 0xc0) return 2;
  if ((lead & 0xf0) === 0xe0) return 3;
  if ((lead & 0xf8) === 0xf0) return 4;
  return 1;
}

/** Length of `bytes` without a UTF-8 sequence cut off at its end. */
function wholeCharacters(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const lead = bytes[bytes.length - back]!;
    if (isContinuation(lead)) continue;
    return sequenceLength(lead) > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/**
 * Reads the output since `cursor`, at most `maxBytes` bytes. A read cut at `maxBytes` ends on a
 * character boundary and is an exact prefix of what follows the cursor (`truncated: true`); a
 * character still being written is left for the next read unless `ended`. When the ring dropped bytes
 * after the cursor, the read starts at the oldest kept character and says how many were lost.
 *
 * @returns `undefined` when `cursor` lies beyond the bytes written so far.
 */
export function readRing(ring: OutputRing, cursor: number, maxBytes: number, ended: boolean): StreamRead | undefined {
  if (cursor > ring.total) return undefined;
  let from = Math.max(cursor, ring.start);
  if (from > cursor) {
    // The ring's oldest byte may be the middle of a character: start at the next whole one.
    const head = ring.slice(from, Math.min(ring.total, from + 3));
    let skip = 0;
    while (skip < head.length && isContinuation(head[skip]!)) skip++;
    from += skip;
  }
  const to = Math.min(ring.total, from + maxBytes);
  let bytes = ring.slice(from, to);
  const cut = to < ring.total;
  if (cut || !ended) {
    const whole = wholeCharacters(bytes);
    if (whole > 0 || !cut) bytes = bytes.subarray(0, whole);
  }
  const nextCursor = from + bytes.length;
  return {
    text: bytes.toString('utf8'),
    cursor: from,
    nextCursor,
    truncated: nextCursor < ring.total && cut,
    droppedBytes: from - cursor,
    totalBytes: ring.total,
  };
}
