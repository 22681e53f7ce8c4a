import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/helpers.js';
import { startTestHost, tempDir } from '../support/testHost.js';

describe('capnode ui', () => {
  it('--print-url prints exactly one line: a login URL that signs in once', async () => {
    await using test = await startTestHost();
    const result = await runCli(['ui', '--print-url'], test.home);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('');
    const url = lines[0]!;
    expect(url.startsWith(`${test.host.status().dashboard.url}login?code=`)).toBe(true);
    const login = await fetch(url, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    expect((await fetch(new URL('/api/status', url), { headers: { cookie } })).status).toBe(200);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(403);
  });

  it('without a browser opener prints the URL and says so', async () => {
    await using test = await startTestHost();
    const result = await runCli(['ui'], test.home, { PATH: '/nonexistent' });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/no browser opener \((xdg-open|open|cmd)\) found/);
    expect(result.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=/);
  });

  it('says how to start a host when none runs, and refuses stray arguments', async () => {
    using dir = tempDir();
    const none = await runCli(['ui', '--print-url'], dir.path);
    expect(none.code).toBe(3);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/capnode serve/);
    const stray = await runCli(['ui', 'now'], dir.path);
    expect(stray.code).toBe(2);
  });

  it('says plainly when the host runs without a dashboard', async () => {
    await using test = await startTestHost({ settings: { dashboard: { enabled: false } } });
    const result = await runCli(['ui', '--print-url'], test.home);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/no running dashboard/);
  });
});
