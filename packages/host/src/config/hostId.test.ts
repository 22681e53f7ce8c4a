import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { configDirHostId, HOST_ID_FILE } from './hostId.js';

function tempDir(): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), 'capnode-hostid-'));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

describe('configDirHostId', () => {
  test('makes a random 128-bit id on first use, persisted 0600, and returns the same id afterwards', () => {
    using dir = tempDir();
    const warnings: string[] = [];
    const id = configDirHostId(dir.path, (message) => warnings.push(message));
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(readFileSync(join(dir.path, HOST_ID_FILE), 'utf8')).toBe(`${id}\n`);
    expect(statSync(join(dir.path, HOST_ID_FILE)).mode & 0o777).toBe(0o600);
    expect(configDirHostId(dir.path, (message) => warnings.push(message))).toBe(id);
    expect(warnings).toEqual([]);
  });

  test('another directory gets another id', () => {
    using a = tempDir();
    using b = tempDir();
    expect(configDirHostId(a.path, () => {})).not.toBe(configDirHostId(b.path, () => {}));
  });

  test('a malformed file is replaced, with a warning naming it', () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, HOST_ID_FILE), 'not an id\n', { mode: 0o600 });
    const warnings: string[] = [];
    const id = configDirHostId(dir.path, (message) => warnings.push(message));
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(warnings.join('\n')).toContain(`${join(dir.path, HOST_ID_FILE)} did not hold a host id`);
    expect(configDirHostId(dir.path, () => {})).toBe(id);
  });
});
