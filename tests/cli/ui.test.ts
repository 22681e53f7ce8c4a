// `capnode ui` asks the running host for a one-time login URL and opens it with the same opener
// `servers login` uses ($BROWSER first); without an opener that starts, it prints the URL.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/poll.js';
import { runCli, slowPoll, startServe, tempHome } from './helpers.js';

const LOGIN_URL = /^http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+$/;

describe('capnode ui', () => {
  it.skipIf(process.platform === 'win32')('opens the login URL with $BROWSER; prints it when the opener cannot start', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ approvals: { notify: false } }), { mode: 0o600 });
    await using _serve = await startServe(dir.home);
    const seen = join(dir.home, 'opened.txt');
    const browser = join(dir.home, 'browser.mjs');
    writeFileSync(browser, `#!${process.execPath}\nimport { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(seen)}, process.argv[2]);\n`);
    chmodSync(browser, 0o755);

    const opened = await runCli(['ui'], dir.home, { BROWSER: browser });
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toBe('');
    expect(opened.stderr).toContain('opened the dashboard in your browser');
    const url = await eventually(() => existsSync(seen) && readFileSync(seen, 'utf8'), slowPoll('the browser got the URL'));
    expect(url).toMatch(LOGIN_URL);

    const missing = join(dir.home, 'no such browser');
    const printed = await runCli(['ui'], dir.home, { BROWSER: missing });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stderr).toContain(`no browser opener (${missing}) started or it failed`);
    expect(printed.stdout.trim()).toMatch(LOGIN_URL);

    // An opener that starts but fails at once (xdg-open without a display) must not swallow the link.
    const failing = join(dir.home, 'failing-browser.sh');
    writeFileSync(failing, '#!/bin/sh\necho "xdg-open: no method available for opening" >&2\nexit 3\n');
    chmodSync(failing, 0o755);
    const failed = await runCli(['ui'], dir.home, { BROWSER: failing });
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stderr).toContain(`no browser opener (${failing}) started or it failed`);
    expect(failed.stdout.trim()).toMatch(LOGIN_URL);
  });
});
