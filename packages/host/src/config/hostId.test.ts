import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isHostError } from '../errors.js';
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

  test.skipIf(process.platform === 'win32')('a symlink at host-id is refused (insecure_file), its target untouched; a file others can read is narrowed to 0600', () => {
    using dir = tempDir();
    const target = join(dir.path, 'elsewhere');
    writeFileSync(target, `${'a'.repeat(32)}\n`);
    symlinkSync(target, join(dir.path, HOST_ID_FILE));
    let thrown: unknown;
    try {
      configDirHostId(dir.path, () => {});
    } catch (error) {
      thrown = error;
    }
    expect(isHostError(thrown) && thrown.code).toBe('insecure_file');
    expect(readFileSync(target, 'utf8')).toBe(`${'a'.repeat(32)}\n`);

    using open = tempDir();
    writeFileSync(join(open.path, HOST_ID_FILE), `${'b'.repeat(32)}\n`);
    chmodSync(join(open.path, HOST_ID_FILE), 0o644);
    const warnings: string[] = [];
    expect(configDirHostId(open.path, (message) => warnings.push(message))).toBe('b'.repeat(32));
    expect(statSync(join(open.path, HOST_ID_FILE)).mode & 0o777).toBe(0o600);
  });
});
