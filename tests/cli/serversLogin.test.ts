import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approveInBrowser, startOAuthFixture, type OAuthFixture } from '../support/oauthServer.js';
import { completion, runCli, spawnCli, tempHome } from './helpers.js';

const posix = process.platform !== 'win32';

let fixture: OAuthFixture;
beforeEach(async () => {
  fixture = await startOAuthFixture();
});
afterEach(async () => {
  await fixture.close();
});

/** Resolves with the authorization URL `servers login` prints on stderr. */
function printedUrl(child: ReturnType<typeof spawnCli>): Promise<string> {
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no authorization URL printed: ${err}`)), 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
      const match = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
}

describe('capnode servers login', () => {
  it('runs the authorization-code flow with a scripted browser step; servers test then connects; logout removes the tokens', async () => {
    using dir = tempHome();
    expect((await runCli(['servers', 'add', 'secure', '--url', fixture.mcpUrl], dir.home)).code).toBe(0);

    const before = await runCli(['servers', 'test', 'secure'], dir.home);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('capnode servers login secure');

    const child = spawnCli(['servers', 'login', 'secure', '--no-browser'], dir.home);
    child.stdin.end();
    const done = completion(child);
    const url = await printedUrl(child);
    expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
    await approveInBrowser(url);
    const login = await done;
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toMatch(/logged in to 'secure'.*tokens stored in .*oauth.*secure\.json.*refreshed automatically/);
    const tokenFile = join(dir.home, 'oauth', 'secure.json');
    if (posix) expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(tokenFile, 'utf8'));
    expect(login.stdout + login.stderr).not.toContain(stored.tokens.access_token);

    const after = await runCli(['servers', 'test', 'secure'], dir.home);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).toMatch(/secure: connected/);
    expect(fixture.stats.authorizations).toBe(1);

    const logout = await runCli(['servers', 'logout', 'secure'], dir.home);
    expect(logout.code).toBe(0);
    expect(existsSync(tokenFile)).toBe(false);
  });

  it.skipIf(!posix)('opens the URL with $BROWSER', async () => {
    using dir = tempHome();
    expect((await runCli(['servers', 'add', 'secure', '--url', fixture.mcpUrl], dir.home)).code).toBe(0);
    const browser = join(dir.home, 'browser.mjs');
    writeFileSync(
      browser,
      `#!${process.execPath}\nconst r = await fetch(process.argv[2], { redirect: 'manual' });\nawait fetch(r.headers.get('location')).then((c) => c.text());\n`,
    );
    chmodSync(browser, 0o755);
    const login = await runCli(['servers', 'login', 'secure', '--json'], dir.home, { BROWSER: browser });
    expect(login.code, login.stderr).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ server: 'secure', authorized: true, refreshable: true });
  });

  it('refuses unknown and stdio servers with a usage error', async () => {
    using dir = tempHome();
    expect((await runCli(['servers', 'add', 'local', '--command', process.execPath], dir.home)).code).toBe(0);
    const unknown = await runCli(['servers', 'login', 'lokal'], dir.home);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no MCP server named 'lokal'.*did you mean: local/);
    const stdio = await runCli(['servers', 'login', 'local'], dir.home);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain("'local' is a stdio server");
    expect((await runCli(['servers', 'login'], dir.home)).code).toBe(2);
  });
});
