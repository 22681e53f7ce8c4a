import { readFile } from 'node:fs/promises';
import type { AuditRecord } from '../../audit.js';
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

async function readRecords(path: string): Promise<AuditRecord[] | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const records: AuditRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as AuditRecord;
      if (typeof value.time === 'string' && typeof value.command === 'string') records.push(value);
    } catch {
      // A torn or foreign line is skipped.
    }
  }
  return records.reverse();
}

/**
 * `GET /api/activity?tool=&transport=&outcome=&cursor=&limit=`: audit records newest first (rotated
 * files included), filtered (tool: exact command name or `<server>__` prefix; outcome `ok` or a
 * failure code, `error` for every failure), `limit` at most 500, `nextCursor` when there are more.
 * A cursor stays valid while new records are written.
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
    const records = await readRecords(index === 0 ? auditLog : `${auditLog}.${index}`);
    if (records === undefined) {
      if (index === 0) continue;
      break;
    }
    for (const record of records) {
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
  }
  const last = page[page.length - 1];
  let nextCursor: string | undefined;
  if (more && last) {
    const sameTime = page.filter((record) => record.time === last.time).length;
    nextCursor = encodeCursor({ before: last.time, skip: sameTime + (cursor && cursor.before === last.time ? cursor.skip : 0) });
  }
  return json(200, { records: page, ...(nextCursor ? { nextCursor } : {}) });
}

export const activityRoutes: readonly Route[] = [['GET', '/api/activity', ({ host, url }) => activity(host.paths.auditLog, url)]];
