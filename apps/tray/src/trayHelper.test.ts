// Faults the real systray2 helper does not produce on demand: one that hangs at quit (ignores the
// exit action, its stdin closing and SIGTERM), one that never reports ready. A small Node script
// speaks the helper's side of the JSON-lines protocol.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTrayError } from './errors.js';
import { loadTrayIcons } from './icons.js';
import { buildTrayMenu, type TrayState } from './menu.js';
import { startTrayHelper } from './trayHelper.js';

/** The menu the tray shows first, before the host answered. */
const state: TrayState = { mode: 'in-process', connection: 'connecting', pendingApprovals: 0, hasToken: false };

const dir = mkdtempSync(join(tmpdir(), 'capnode-tray-helper-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable fake helper that ignores SIGTERM and its input, and stays up; `ready` says whether it reports ready. */
function stubbornHelper(name: string, ready: boolean): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `#!${process.execPath}\nprocess.on('SIGTERM', () => {});\nprocess.stdin.resume();\n${ready ? `process.stdout.write(JSON.stringify({ type: 'ready' }) + '\\n');\n` : ''}setInterval(() => {}, 1000);\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

function alive(pid: number | undefined): boolean {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(process.platform === 'win32')('the tray helper process when it misbehaves', () => {
  const icons = loadTrayIcons();

  it('close() ends a helper that ignores the exit action, its stdin closing and SIGTERM', async () => {
    const helper = await startTrayHelper(buildTrayMenu(state), { file: stubbornHelper('hangs-at-quit.mjs', true), icons, onClick: () => {} });
    expect(alive(helper.pid)).toBe(true);
    await helper.close();
    expect(await helper.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(alive(helper.pid)).toBe(false);
  });

  it('a helper that never reports ready fails with helper_unavailable after readyTimeoutMs', async () => {
    const failure = await startTrayHelper(buildTrayMenu(state), { file: stubbornHelper('never-ready.mjs', false), icons, onClick: () => {}, readyTimeoutMs: 300 }).catch((error: unknown) => error);
    expect(isTrayError(failure) && failure.code).toBe('helper_unavailable');
    expect((failure as Error).message).toContain('did not report ready within 0.3 s');
  });

  it('an already aborted signal fails at once with helper_failed, not after the ready timeout', async () => {
    const started = Date.now();
    const failure = await startTrayHelper(buildTrayMenu(state), { file: stubbornHelper('aborted.mjs', false), icons, onClick: () => {}, signal: AbortSignal.abort() }).catch((error: unknown) => error);
    expect(isTrayError(failure) && failure.code).toBe('helper_failed');
    // Not the ready timeout (10 s): the abort is seen before waiting.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
