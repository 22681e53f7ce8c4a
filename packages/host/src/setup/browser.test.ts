import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BROWSER_OPENER_FAILS_WITHIN_MS, browserOpener, openBrowser } from './browser.js';

const dir = mkdtempSync(join(tmpdir(), 'capnode-browser-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable opener script: records its arguments (one a line) in `<name>.args`, then runs `then`. */
function opener(name: string, then: string): { file: string; args: () => string[] | undefined } {
  const file = join(dir, name);
  const record = `${file}.args`;
  writeFileSync(file, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${record}'; done\n${then}\n`);
  chmodSync(file, 0o755);
  return { file, args: () => (existsSync(record) ? readFileSync(record, 'utf8').split('\n').slice(0, -1) : undefined) };
}

describe('browserOpener', () => {
  it('$BROWSER first, else xdg-open, open, or the Windows URL protocol handler (never cmd start)', () => {
    const url = 'http://127.0.0.1:1/login?code=a&b=c';
    expect(browserOpener({ BROWSER: '/opt/my browser' }, 'linux')).toMatchObject({ command: '/opt/my browser' });
    expect(browserOpener({ BROWSER: 'firefox' }, 'linux').args(url)).toEqual([url]);
    expect(browserOpener({}, 'linux').command).toBe('xdg-open');
    expect(browserOpener({ BROWSER: '' }, 'freebsd').command).toBe('xdg-open');
    expect(browserOpener({}, 'darwin').command).toBe('open');
    const windows = browserOpener({}, 'win32');
    expect([windows.command, ...windows.args(url)]).toEqual(['rundll32', 'url.dll,FileProtocolHandler', url]);
  });
});

describe.skipIf(process.platform === 'win32')('openBrowser (real processes)', () => {
  const env = (browser: string) => ({ PATH: process.env.PATH, BROWSER: browser });

  it('passes the URL as one argument, without a shell, and reports opened when the opener exits 0', async () => {
    const ok = opener('ok', 'exit 0');
    const url = 'http://127.0.0.1:1/x?a=1&b=$(touch pwned);c';
    expect(await openBrowser(url, { env: env(ok.file) })).toEqual({ opened: true, command: ok.file });
    expect(ok.args()).toEqual([url]);
    expect(existsSync('pwned')).toBe(false);
  });

  it('not_started for an opener that does not exist, failed for one that exits with an error at once', async () => {
    const missing = join(dir, 'no such opener');
    expect(await openBrowser('http://127.0.0.1:1/', { env: env(missing) })).toMatchObject({ opened: false, command: missing, reason: 'not_started', detail: expect.stringContaining('ENOENT') });
    const failing = opener('failing', 'exit 3');
    expect(await openBrowser('http://127.0.0.1:1/', { env: env(failing.file) })).toEqual({ opened: false, command: failing.file, reason: 'failed', detail: 'exit code 3' });
  });

  it(`counts an opener still running after ${BROWSER_OPENER_FAILS_WITHIN_MS} ms as opened and leaves it running`, async () => {
    const slow = opener('slow', `sleep 4; echo late > '${join(dir, 'slow.done')}'`);
    const started = Date.now();
    expect(await openBrowser('http://127.0.0.1:1/', { env: env(slow.file) })).toEqual({ opened: true, command: slow.file });
    expect(Date.now() - started).toBeGreaterThanOrEqual(BROWSER_OPENER_FAILS_WITHIN_MS - 50);
  });

  it('rejects with the reason when the signal aborts, before the start or while waiting', async () => {
    const slow = opener('slow-abort', 'sleep 3');
    await expect(openBrowser('http://127.0.0.1:1/', { env: env(slow.file), signal: AbortSignal.abort(new Error('early')) })).rejects.toThrow('early');
    expect(slow.args()).toBeUndefined();
    const controller = new AbortController();
    const opening = openBrowser('http://127.0.0.1:1/', { env: env(slow.file), signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop waiting')), 100);
    await expect(opening).rejects.toThrow('stop waiting');
  });
});
