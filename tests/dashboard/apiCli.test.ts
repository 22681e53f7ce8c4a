import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { completion, runCli, spawnCli, startServe, tempHome } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';
import { startTestHost, tempDir } from '../support/testHost.js';
import { dashboardBase } from './apiClient.js';

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
    expect((await fetch(`${dashboardBase(url, login)}/api/status`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(403);
  });

  it('without a browser opener prints the URL and says so', async () => {
    await using test = await startTestHost();
    const result = await runCli(['ui'], test.home, { PATH: '/nonexistent' });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/no browser opener \((xdg-open|open|rundll32)\) started or it failed/);
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

  it('capnode serve exits by itself on SIGTERM while a dashboard event stream is open', async () => {
    using dir = tempHome();
    await using serve = await startServe(dir.home);
    const url = (await runCli(['ui', '--print-url'], dir.home)).stdout.trim();
    const login = await fetch(url, { redirect: 'manual' });
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    const events = await fetch(`${dashboardBase(url, login)}/api/events`, { headers: { cookie } });
    expect(events.status).toBe(200);
    const reader = events.body!.getReader();
    await reader.read();
    expect(await serve.stop('SIGTERM')).toBe(0);
    // The stream was ended by the host, not left hanging.
    for (;;) if ((await reader.read()).done) break;
  });

  it('a stdio host (capnode mcp) serves the dashboard too', async () => {
    using dir = tempHome();
    const child = spawnCli(['mcp'], dir.home);
    const done = completion(child);
    try {
      const runtime = await eventually(() => {
        const name = (() => {
          try {
            return readdirSync(join(dir.home, 'run')).find((entry) => entry.startsWith('stdio-') && entry.endsWith('.json'));
          } catch {
            return undefined;
          }
        })();
        return name ? (JSON.parse(readFileSync(join(dir.home, 'run', name), 'utf8')) as { dashboardUrl?: string }) : undefined;
      }, { what: 'the stdio host runtime file' });
      expect(runtime.dashboardUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const printed = await runCli(['ui', '--print-url'], dir.home);
      expect(printed.code).toBe(0);
      expect(printed.stdout.startsWith(`${runtime.dashboardUrl}login?code=`)).toBe(true);
      expect((await fetch(printed.stdout.trim(), { redirect: 'manual' })).status).toBe(303);
    } finally {
      child.stdin.end();
    }
    expect((await done).code).toBe(0);
  });
});
