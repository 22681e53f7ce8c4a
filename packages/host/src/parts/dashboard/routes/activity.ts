import { open, type FileHandle } from 'node:fs/promises';
import type { AuditRecord } from '../../../audit/auditRecord.js';
import type { ActivityView } from '../apiTypes.js';
import { apiError, json } from '../reply.js';
import type { Route } from '../types.js';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
/** Rotated files looked at: `audit.log`, `.1` … `.9`. */
const MAX_FILES = 10;

interface Cursor {
  /** Time of the last record shown. */
  readonly before: string;
  /** Records with exactly that time already shown. */
  readonly skip: number;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof value.before === 'string' && Number.isInteger(value.skip) && (value.skip as number) >= 0) return value as Cursor;
  } catch {
    // Falls through.
  }
  return undefined;
}

/** Bytes read per step from a log's end: a first page costs a chunk or two, not the whole file. */
const CHUNK_BYTES = 64 * 1024;

/** The lines of `handle` from its last to its first (as the file was when the walk began). */
async function* linesNewestFirst(handle: FileHandle): AsyncGenerator<string> {
  let position = (await handle.stat()).size;
  // The bytes after the earliest newline seen so far: a line whose start is still to be read.
  let tail = Buffer.alloc(0);
  while (position > 0) {
    const length = Math.min(CHUNK_BYTES, position);
    position -= length;
    const chunk = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(chunk, read, length - read, position + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    const buffer = Buffer.concat([chunk.subarray(0, read), tail]);
    let end = buffer.length;
    for (let newline = buffer.lastIndexOf(0x0a, end - 1); newline !== -1; newline = end > 0 ? buffer.lastIndexOf(0x0a, end - 1) : -1) {
      yield buffer.toString('utf8', newline + 1, end);
      end = newline;
    }
    tail = buffer.subarray(0, end);
  }
  yield tail.toString('utf8');
}

/** The audit records of one log file, newest first; torn or foreign lines are skipped. */
async function* recordsNewestFirst(handle: FileHandle): AsyncGenerator<AuditRecord> {
  for await (const line of linesNewestFirst(handle)) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as AuditRecord;
      if (typeof value.time === 'string' && typeof value.command === 'string') yield value;
    } catch {
      // A torn or foreign line is skipped.
    }
  }
}

/**
 * `GET /api/activity?tool=&transport=&outcome=&cursor=&limit=`: audit records newest first (rotated
 * files included), filtered (tool: exact command name or `<server>__` prefix; outcome `ok` or a
 * failure code, `error` for every failure), `limit` at most 500, `nextCursor` when there are more.
 * A cursor stays valid while new records are written. Files are read from their end, only as far as
 * the page needs.
 */
async function activity(auditLog: string, url: URL): Promise<Response> {
  const query = url.searchParams;
  const limitText = query.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return apiError(400, 'invalid', `limit must be an integer 1..${MAX_LIMIT}`, [{ path: 'limit', message: 'out of range' }]);
  const cursorText = query.get('cursor');
  const cursor = cursorText ? decodeCursor(cursorText) : undefined;
  if (cursorText && !cursor) return apiError(400, 'invalid', 'unknown cursor', [{ path: 'cursor', message: 'not a cursor this host gave' }]);
  const tool = query.get('tool') || undefined;
  const transport = query.get('transport') || undefined;
  const outcome = query.get('outcome') || undefined;
  const matches = (record: AuditRecord) =>
    (tool === undefined || record.command === tool || (tool.endsWith('__') && record.command.startsWith(tool))) &&
    (transport === undefined || record.transport === transport) &&
    (outcome === undefined || record.outcome === outcome || (outcome === 'error' && record.outcome !== 'ok'));
  const page: AuditRecord[] = [];
  let skipped = 0;
  let more = false;
  for (let index = 0; index < MAX_FILES && !more; index += 1) {
    const handle = await open(index === 0 ? auditLog : `${auditLog}.${index}`, 'r').catch(() => undefined);
    if (handle === undefined) {
      if (index === 0) continue;
      break;
    }
    try {
      for await (const record of recordsNewestFirst(handle)) {
        if (!matches(record)) continue;
        if (cursor && record.time > cursor.before) continue;
        if (cursor && record.time === cursor.before && skipped < cursor.skip) {
          skipped += 1;
          continue;
        }
        if (page.length === limit) {
          more = true;
          break;
        }
        page.push(record);
      }
    } finally {
      await handle.close();
    }
  }
  const last = page[page.length - 1];
  let nextCursor: string | undefined;
  if (more && last) {
    const sameTime = page.filter((record) => record.time === last.time).length;
    nextCursor = encodeCursor({ before: last.time, skip: sameTime + (cursor && cursor.before === last.time ? cursor.skip : 0) });
  }
  return json(200, { records: page, ...(nextCursor ? { nextCursor } : {}) } satisfies ActivityView);
}

export const activityRoutes: readonly Route[] = [['GET', '/api/activity', ({ host, url }) => activity(host.paths.auditLog, url)]];
