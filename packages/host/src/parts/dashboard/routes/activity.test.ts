import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RouteContext } from '../types.js';
import { activityRoutes } from './activity.js';

const root = mkdtempSync(join(tmpdir(), 'capnode-activity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const handler = activityRoutes[0]![2];

async function page(auditLog: string, query: string): Promise<{ status: number; body: { records: { time: string; caller: string }[]; nextCursor?: string } }> {
  const context = { host: { paths: { auditLog } }, url: new URL(`http://127.0.0.1/api/activity?${query}`) } as unknown as RouteContext;
  const response = await handler(context);
  return { status: response.status, body: (await response.json()) as never };
}

/** `count` records, oldest first, three to a second (ties the cursor must step over), with multi-byte callers. */
function records(count: number, from: number): { time: string; caller: string; line: string }[] {
  return Array.from({ length: count }, (_, offset) => {
    const index = from + offset;
    const time = new Date(Date.UTC(2026, 0, 1) + Math.floor(index / 3) * 1000).toISOString();
    const caller = `agent ${index} ${'ü€𝄞'.repeat(index % 7)}`;
    return { time, caller, line: JSON.stringify({ time, command: 'device.info', transport: 'mcp-http', caller, outcome: 'ok', durationMs: 1 }) };
  });
}

describe('GET /api/activity', () => {
  it('pages newest first across rotated files larger than a read chunk, skipping torn and foreign lines', async () => {
    const auditLog = join(root, 'audit.log');
    const older = records(1500, 0);
    const newer = records(1500, 1500);
    // Over 64 KiB each, so lines and multi-byte characters straddle the chunks read from the end.
    writeFileSync(`${auditLog}.1`, `${older.map((record) => record.line).join('\n')}\nnot json\n`);
    writeFileSync(auditLog, `${newer.map((record) => record.line).join('\n')}\n{"torn":`);
    const expected = [...older, ...newer].reverse().map(({ time, caller }) => `${time} ${caller}`);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { status, body } = await page(auditLog, `limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(status).toBe(200);
      seen.push(...body.records.map(({ time, caller }) => `${time} ${caller}`));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(15);
    expect(seen).toEqual(expected);
  });

  it('reads the rotated files when audit.log itself is missing, and an empty log gives no records', async () => {
    const dir = mkdtempSync(join(root, 'rotated-'));
    const auditLog = join(dir, 'audit.log');
    expect((await page(auditLog, '')).body).toEqual({ records: [] });
    writeFileSync(`${auditLog}.1`, `${records(2, 0).map((record) => record.line).join('\n')}\n`);
    expect((await page(auditLog, '')).body.records.map((record) => record.caller)).toEqual(['agent 1 ü€𝄞', 'agent 0 ']);
  });
});
