import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openInBrowser } from './desktop.js';
import { isTrayError } from './errors.js';

const dir = mkdtempSync(join(tmpdir(), 'capnode-tray-desktop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function trayFailure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isTrayError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a TrayError');
}

function script(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe.skipIf(process.platform === 'win32')('openInBrowser: the host opener, with the tray\'s errors', () => {
  const url = 'http://127.0.0.1:1/login?code=secret#/approvals';

  it('runs xdg-open from PATH (or $BROWSER) with the URL', async () => {
    const seen = join(dir, 'seen');
    script('xdg-open', `printf '%s' "$1" > '${seen}'`);
    await openInBrowser(url, { env: { PATH: dir }, platform: 'linux' });
    expect(readFileSync(seen, 'utf8')).toBe(url);
    const browser = script('browser', `printf 'B:%s' "$1" > '${seen}'`);
    await openInBrowser(url, { env: { PATH: '/nonexistent', BROWSER: browser }, platform: 'linux' });
    expect(readFileSync(seen, 'utf8')).toBe(`B:${url}`);
  });

  it('no opener: unsupported, saying what to install, with the one-time code masked', async () => {
    const failure = await trayFailure(openInBrowser(url, { env: { PATH: '/nonexistent' }, platform: 'linux' }));
    expect(failure.code).toBe('unsupported');
    expect(failure.message).toContain('install xdg-utils');
    expect(failure.message).toContain('login?code=…#/approvals');
    expect(failure.message).not.toContain('secret');
  });

  it('an opener that fails at once: failed, naming it and its exit code; a non-http URL is refused without running anything', async () => {
    const failing = script('failing', 'exit 4');
    expect(await trayFailure(openInBrowser(url, { env: { PATH: '/nonexistent', BROWSER: failing }, platform: 'linux' }))).toEqual({ code: 'failed', message: `${failing} could not open the browser (exit code 4)` });
    const refused = await trayFailure(openInBrowser('file:///etc/passwd', { env: { PATH: dir }, platform: 'linux' }));
    expect(refused).toMatchObject({ code: 'failed', message: expect.stringContaining('not an http(s) URL') });
  });
});
