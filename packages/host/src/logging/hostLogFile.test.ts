import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostLogFile } from './hostLogFile.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('createHostLogFile', () => {
  it('appends timestamped lines 0600 in a 0700 directory and rotates by size, keeping maxFiles', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-log-'));
    dirs.push(dir);
    const path = join(dir, 'logs', 'host.log');
    const log = createHostLogFile(path, { rotateBytes: 200, maxFiles: 3 });
    log.write('info', 'first\nsecond line');
    expect(readFileSync(path, 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT\S+Z info \[\d+\] first\n {4}second line\n$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'logs')).mode & 0o777).toBe(0o700);
    for (let i = 0; i < 20; i++) log.write('warning', `line ${i} ${'x'.repeat(60)}`);
    log.close();
    expect(readdirSync(join(dir, 'logs')).sort()).toEqual(['host.log', 'host.log.1', 'host.log.2']);
    for (const name of ['host.log', 'host.log.1', 'host.log.2']) expect(statSync(join(dir, 'logs', name)).size).toBeLessThanOrEqual(200);
    expect(readFileSync(path, 'utf8')).toContain('line 19 ');
  });

  it('drops lines after close instead of recreating the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-log-'));
    dirs.push(dir);
    const log = createHostLogFile(join(dir, 'logs', 'host.log'), { rotateBytes: 1000, maxFiles: 2 });
    log.write('info', 'before');
    log.close();
    rmSync(join(dir, 'logs'), { recursive: true });
    log.write('warning', 'a late line from a part winding down');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('stops writing after an error instead of throwing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-log-'));
    dirs.push(dir);
    // The log path's parent is a file: every open fails.
    const log = createHostLogFile(join(dir, 'file', 'host.log'), { rotateBytes: 100, maxFiles: 2 });
    writeFileSync(join(dir, 'file'), '');
    expect(() => log.write('error', 'x')).not.toThrow();
    expect(() => log.write('error', 'y')).not.toThrow();
  });

  it.skipIf(process.platform === 'win32')('never writes through a symlinked host.log, and narrows a log others can read to 0600', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-log-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'logs'), { mode: 0o700 });
    const target = join(dir, 'elsewhere');
    writeFileSync(target, 'keep\n');
    symlinkSync(target, join(dir, 'logs', 'host.log'));
    const linked = createHostLogFile(join(dir, 'logs', 'host.log'), { rotateBytes: 1000, maxFiles: 2 });
    expect(() => linked.write('error', 'x')).not.toThrow();
    linked.close();
    expect(readFileSync(target, 'utf8')).toBe('keep\n');

    const path = join(dir, 'open.log');
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    const log = createHostLogFile(path, { rotateBytes: 1000, maxFiles: 2 });
    log.write('info', 'y');
    log.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
