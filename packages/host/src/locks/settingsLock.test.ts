import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isHostError } from '../errors.js';
import { createSettingsStore } from '../config/settings.js';

let home: string;
let path: string;
let lockPath: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-settings-lock-'));
  path = join(home, 'settings.json');
  lockPath = `${path}.lock`;
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

const writeLock = (pid: number, at = Date.now()) => writeFileSync(lockPath, `${JSON.stringify({ pid, token: `t${pid}`, at })}\n`, { mode: 0o600 });
const leftovers = () => readdirSync(home).filter((name) => name !== 'settings.json' && name !== 'target.json');
const enable = (settings: ReturnType<ReturnType<typeof createSettingsStore>['get']>) => ({ ...settings, plugins: [...settings.plugins, '/opt/p'] });

describe('settings lock', () => {
  it('removes its lock and temporary files after each update', async () => {
    const store = createSettingsStore(path);
    await store.update(enable);
    expect(existsSync(lockPath)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('takes over a lock whose pid no longer runs', async () => {
    writeLock(deadPid());
    const store = createSettingsStore(path, { lockTimeoutMs: 2_000 });
    await expect(store.update(enable)).resolves.toMatchObject({ plugins: ['/opt/p'] });
    expect(JSON.parse(readFileSync(path, 'utf8')).plugins).toEqual(['/opt/p']);
    expect(leftovers()).toEqual([]);
  });

  it('takes over a damaged lock, and a live pid lock older than staleLockMs', async () => {
    writeFileSync(lockPath, '{"pid":', { mode: 0o600 });
    const store = createSettingsStore(path, { lockTimeoutMs: 2_000, staleLockMs: 1_000 });
    await store.update(enable);
    writeLock(process.pid, Date.now() - 5_000);
    await store.update((settings) => ({ ...settings, plugins: [...settings.plugins, '/opt/q'] }));
    expect(store.get().plugins).toEqual(['/opt/p', '/opt/q']);
    expect(leftovers()).toEqual([]);
  });

  it('fails with settings_locked naming the lock and its pid while a live process holds it; nothing is written', async () => {
    writeFileSync(path, '{"plugins":["/opt/before"]}\n', { mode: 0o600 });
    writeLock(process.pid);
    const store = createSettingsStore(path, { lockTimeoutMs: 300 });
    const failure = await store.update(enable).catch((error: unknown) => error);
    expect(isHostError(failure) && failure.code).toBe('settings_locked');
    expect((failure as Error).message).toContain(lockPath);
    expect((failure as Error).message).toContain(`pid ${process.pid}`);
    expect(readFileSync(path, 'utf8')).toBe('{"plugins":["/opt/before"]}\n');
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(process.pid); // the holder's lock stays
    // Once released, the next update goes through (the queue is not stuck).
    rmSync(lockPath);
    await expect(store.update(enable)).resolves.toMatchObject({ plugins: ['/opt/before', '/opt/p'] });
  });

  it('waits for a lock released before the deadline', async () => {
    writeLock(process.pid);
    const store = createSettingsStore(path, { lockTimeoutMs: 5_000 });
    const update = store.update(enable);
    setTimeout(() => rmSync(lockPath), 100);
    await expect(update).resolves.toMatchObject({ plugins: ['/opt/p'] });
  });

  it('stops waiting when the signal aborts, with code aborted', async () => {
    writeLock(process.pid);
    const store = createSettingsStore(path, { lockTimeoutMs: 10_000 });
    const controller = new AbortController();
    const update = store.update(enable, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(update).rejects.toMatchObject({ code: 'aborted' });
    expect(existsSync(path)).toBe(false);
    // An already aborted signal writes nothing even when the lock is free.
    rmSync(lockPath);
    await expect(store.update(enable, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'aborted' });
    expect(existsSync(path)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')('never follows a symlink at the lock path; its target is untouched', async () => {
    const target = join(home, 'target.json');
    writeFileSync(target, 'precious\n', { mode: 0o600 });
    symlinkSync(target, lockPath);
    const store = createSettingsStore(path, { lockTimeoutMs: 300 });
    await expect(store.update(enable)).rejects.toMatchObject({ code: 'insecure_file' });
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(lstatSync(lockPath).isSymbolicLink()).toBe(true);
    expect(existsSync(path)).toBe(false);
    // A dangling symlink is not followed either (exclusive link creation fails on it; nothing is created at its target).
    rmSync(target);
    await expect(store.update(enable)).rejects.toMatchObject({ code: 'insecure_file' });
    expect(existsSync(target)).toBe(false);
    expect(existsSync(path)).toBe(false);
  });
});
