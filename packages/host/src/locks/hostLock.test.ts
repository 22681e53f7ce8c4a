import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isHostError } from '../errors.js';
import { createHost } from '../host/host.js';
import { acquireHostLock } from './hostLock.js';

const posix = process.platform !== 'win32';
let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-lock-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a failure');
}

describe('one host per config directory (in-process)', () => {
  it('refuses a second host on the same directory, naming the pid and URL that hold it; frees the lock on close', async () => {
    await using first = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const status = await first.start();
    const lock = JSON.parse(readFileSync(join(home, 'run', 'host.lock'), 'utf8')) as { pid: number; url: string; instance: string };
    expect(lock).toMatchObject({ pid: process.pid, url: status.mcp.url });
    if (posix) expect(statSync(join(home, 'run', 'host.lock')).mode & 0o777).toBe(0o600);

    const second = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const error = await failure(second.start());
    expect(isHostError(error) && error.code).toBe('locked');
    expect(error.message).toContain(`another capnode host already runs with the config directory ${home}: pid ${process.pid} (MCP on ${status.mcp.url}`);
    await second.close();
    // The loser removed nothing of the winner's.
    expect(JSON.parse(readFileSync(join(home, 'host.json'), 'utf8'))).toMatchObject({ url: status.mcp.url, instance: lock.instance });
    expect(existsSync(join(home, 'run', 'host.lock'))).toBe(true);

    await first.close();
    expect(existsSync(join(home, 'run', 'host.lock'))).toBe(false);
    expect(existsSync(join(home, 'host.json'))).toBe(false);
    await using third = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    expect((await third.start()).mcp.state).toBe('listening');
  });

  it('two hosts starting at the same moment: exactly one wins', async () => {
    const hosts = [0, 1, 2].map(() => createHost({ home, port: 0, builtins: false, onLog: () => {} }));
    const results = await Promise.allSettled(hosts.map((host) => host.start()));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) if (result.status === 'rejected') expect((result.reason as { code?: string }).code).toBe('locked');
    await Promise.all(hosts.map((host) => host.close()));
    expect(existsSync(join(home, 'run', 'host.lock'))).toBe(false);
  });

  it('removes host.json only when this instance wrote it (same pid, other instance: kept)', async () => {
    const host = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    await host.start();
    const other = { pid: process.pid, instance: 'another-instance', kind: 'http', url: 'http://127.0.0.1:1/', adminUrl: 'http://127.0.0.1:1/_capnode/', startedAt: new Date().toISOString(), version: 'x' };
    writeFileSync(join(home, 'host.json'), JSON.stringify(other), { mode: 0o600 });
    await host.close();
    expect(JSON.parse(readFileSync(join(home, 'host.json'), 'utf8'))).toEqual(other);
  });

  it('takes over a stale lock (its pid is gone) or a damaged one, and says so', async () => {
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    const path = join(home, 'run', 'host.lock');
    writeFileSync(path, JSON.stringify({ pid: 999_999_999, instance: 'dead', startedAt: 'then' }), { mode: 0o600 });
    const warnings: string[] = [];
    const lock = acquireHostLock({ runDir: join(home, 'run'), home, instance: 'me', onWarning: (message) => warnings.push(message) });
    expect(warnings).toEqual([`removed the stale lock of pid 999999999 (no longer running) from ${path}`]);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, instance: 'me' });
    lock.release();
    writeFileSync(path, '{ half', { mode: 0o600 });
    acquireHostLock({ runDir: join(home, 'run'), home, instance: 'me2', onWarning: (message) => warnings.push(message) }).release();
    expect(warnings[1]).toBe(`removed a damaged lock ${path}`);
    expect(existsSync(path)).toBe(false);
  });

  it('a live pid holds the lock even when the holder is another process', () => {
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    writeFileSync(join(home, 'run', 'host.lock'), JSON.stringify({ pid: 1, instance: 'init', startedAt: 'boot', address: '127.0.0.1:8765' }), { mode: 0o600 });
    let error: unknown;
    try {
      acquireHostLock({ runDir: join(home, 'run'), home, instance: 'me', isAlive: (pid) => pid === 1 });
    } catch (caught) {
      error = caught;
    }
    expect(isHostError(error) && error.code).toBe('locked');
    expect((error as Error).message).toContain('pid 1 (starting on 127.0.0.1:8765, since boot)');
    expect((error as Error).message).toContain(`If pid 1 is not a capnode host, remove ${join(home, 'run', 'host.lock')}`);
  });

  it('releasing a lock another instance took over leaves theirs alone', () => {
    const lock = acquireHostLock({ runDir: join(home, 'run'), home, instance: 'mine' });
    writeFileSync(lock.path, JSON.stringify({ pid: process.pid, instance: 'theirs', startedAt: 'now' }), { mode: 0o600 });
    lock.release();
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).instance).toBe('theirs');
  });
});

describe.skipIf(!posix)('config directory attacks', () => {
  it('refuses a config directory that is a symlink', () => {
    const real = join(home, 'real');
    mkdirSync(real, { mode: 0o700 });
    const linked = join(home, 'linked');
    symlinkSync(real, linked);
    let error: unknown;
    try {
      createHost({ home: linked, onLog: () => {} });
    } catch (caught) {
      error = caught;
    }
    expect(isHostError(error) && error.code).toBe('insecure_file');
    expect((error as Error).message).toBe(`refusing to use the config directory ${linked}: it is a symbolic link; point CAPNODE_HOME at the real directory instead`);
  });

  it('refuses a symlinked run/ directory (the lock and runtime files live there)', async () => {
    const elsewhere = join(home, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    const dir = join(home, 'config');
    mkdirSync(dir, { mode: 0o700 });
    symlinkSync(elsewhere, join(dir, 'run'));
    const host = createHost({ home: dir, port: 0, builtins: false, onLog: () => {} });
    const error = await failure(host.start());
    expect(error.code).toBe('insecure_file');
    expect(error.message).toContain(`the run directory ${join(dir, 'run')}: it is a symbolic link`);
    await host.close();
    expect(existsSync(join(elsewhere, 'host.lock'))).toBe(false);
  });

  it('narrows a config directory others can enter (0755) to 0700 and says so', async () => {
    chmodSync(home, 0o755);
    const warnings: string[] = [];
    const host = createHost({ home, builtins: false, onLog: (level, message) => level === 'warning' && warnings.push(message) });
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(warnings).toContain(`the config directory ${home} was accessible to other users (mode 0755); narrowed it to 0700`);
    await host.close();
  });

  it('refuses a world-readable MCP token (chmod 600 fix), and a token symlinked to another file', async () => {
    writeFileSync(join(home, 'mcp-token'), 'leaked-token-value\n', { mode: 0o644 });
    chmodSync(join(home, 'mcp-token'), 0o644);
    const host = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const error = await failure(host.start());
    expect(error.code).toBe('insecure_file');
    expect(error.message).toBe(`refusing to use the token file ${join(home, 'mcp-token')}: other users can access it (mode 0644); make it private with: chmod 600 ${join(home, 'mcp-token')}`);
    expect(host.status().mcp).toMatchObject({ state: 'error', error: error.message });
    await host.close();

    rmSync(join(home, 'mcp-token'));
    writeFileSync(join(home, 'victim'), 'ssh-private-key-material\n', { mode: 0o600 });
    symlinkSync(join(home, 'victim'), join(home, 'admin-token'));
    const again = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const linked = await failure(again.start());
    expect(linked.code).toBe('insecure_file');
    expect(linked.message).toContain(`${join(home, 'admin-token')}: it is a symbolic link`);
    await again.close();
    expect(readFileSync(join(home, 'victim'), 'utf8')).toBe('ssh-private-key-material\n');
  });
});
