import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledTrayHelper, runnableTrayHelper } from '../../apps/tray/src/helperBinary.js';
import { createInProcessLink, inProcessHostOptions } from '../../apps/tray/src/hostLink.js';
import { startTray } from '../../apps/tray/src/tray.js';
import { startTestDisplay, type TestDisplay } from '../support/display.js';
import { eventually } from '../support/poll.js';
import { startTestHost, tempDir } from '../support/testHost.js';

const serverScript = fileURLToPath(new URL('./fixtures/notificationServer.py', import.meta.url));
const python = '/usr/bin/python3';
/** The recording notification server needs Debian's python3-dbus and python3-gi. */
const hasNotificationServer = spawnSync(python, ['-c', 'import dbus, gi'], { stdio: 'ignore' }).status === 0;
const slow = { timeoutMs: 20_000 };

interface Shown {
  readonly summary: string;
  readonly body: string;
  readonly actions: readonly string[];
}

/** Starts the recording notification server on the display's bus; it clicks the action `click`. */
async function startNotificationServer(env: NodeJS.ProcessEnv, click: string): Promise<{ shown: Shown[]; child: ChildProcess }> {
  const child = spawn(python, [serverScript], { env: { ...env, CLICK: click }, stdio: ['ignore', 'pipe', 'inherit'] });
  const shown: Shown[] = [];
  let ready = false;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const value = JSON.parse(line) as Shown & { ready?: boolean };
    if (value.ready) ready = true;
    else shown.push(value);
  });
  await eventually(() => ready, { what: 'the notification server', ...slow });
  return { shown, child };
}

describe.runIf(process.platform === 'linux' && hasNotificationServer)('a new pending approval raises a desktop notification that leads to it', () => {
  let display: TestDisplay;
  beforeAll(async () => {
    display = await startTestDisplay();
  });
  afterAll(async () => {
    await display?.close();
  });

  it('notify-send with an "Open approvals" action; choosing it opens the dashboard on a one-time login URL at #/approvals', { timeout: 60_000 }, async () => {
    using bin = tempDir('capnode-tray-bin-');
    const opened = join(bin.path, 'opened.txt');
    // The browser: a recording xdg-open first on PATH (the real openInBrowser looks it up and runs it).
    writeFileSync(join(bin.path, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    chmodSync(join(bin.path, 'xdg-open'), 0o755);
    const env = { ...display.env, PATH: `${bin.path}:${process.env.PATH}` };
    const notifications = await startNotificationServer(env, 'open');
    await using test = await startTestHost({ clientName: 'tray-notify' });
    await using tray = await startTray({
      link: createInProcessLink(test.host),
      env,
      helperFile: runnableTrayHelper(bundledTrayHelper(), join(bin.path, 'cache')),
      statusIntervalMs: 200,
      onLog: () => {},
    });
    try {
      const call = test.call('system.run', { command: [process.execPath, '-e', 'console.log("tray <b>notify</b>")'] });
      const shown = await eventually(() => notifications.shown.find((entry) => entry.actions.includes('open')), { what: 'the tray notification', ...slow });
      expect(shown.summary).toBe('capnode: approval needed (system.run)');
      expect(shown.actions).toEqual(['open', 'Open approvals']);
      // Markup in the request is shown as text, not rendered.
      expect(shown.body).toContain('&lt;b&gt;notify&lt;/b&gt;');
      expect(shown.body).not.toContain('<b>');
      await eventually(() => tray.state().pendingApprovals === 1, { what: 'the pending count', ...slow });

      const url = await eventually(() => (existsSync(opened) ? readFileSync(opened, 'utf8').trim() : undefined), { what: 'the browser opened', ...slow });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=[^#]+#\/approvals$/);
      // A real one-time login: the dashboard exchanges it once for a session.
      const login = await fetch(url.replace(/#.*$/, ''), { redirect: 'manual' });
      expect(login.status).toBe(303);
      expect(login.headers.get('set-cookie')).toMatch(/^capnode_session=/);

      test.host.approvals.resolve(test.host.approvals.list()[0]!.id, 'deny');
      await call;
      await eventually(() => tray.state().pendingApprovals === 0, { what: 'no pending approval', ...slow });
    } finally {
      notifications.child.kill();
    }
  });
});

describe.runIf(process.platform === 'linux' && hasNotificationServer)('a notification nobody answers', () => {
  it('ends its notify-send when the approval is answered elsewhere, and Quit does not wait for it', { timeout: 60_000 }, async () => {
    await using display = await startTestDisplay();
    using bin = tempDir('capnode-tray-bin-');
    const notifications = await startNotificationServer(display.env, '');
    await using test = await startTestHost({ clientName: 'tray-notify-unanswered' });
    const tray = await startTray({ link: createInProcessLink(test.host), env: display.env, helperFile: runnableTrayHelper(bundledTrayHelper(), join(bin.path, 'cache')), onLog: () => {} });
    try {
      const call = test.call('system.run', { command: [process.execPath, '-e', '1'] });
      await eventually(() => notifications.shown.some((entry) => entry.actions.includes('open')), { what: 'the tray notification', ...slow });
      const waiting = () => spawnSyncPgrep(display.busAddress);
      await eventually(() => waiting() > 0, { what: 'notify-send waiting for an answer', ...slow });
      test.host.approvals.resolve(test.host.approvals.list()[0]!.id, 'deny');
      await call;
      await eventually(() => waiting() === 0, { what: 'notify-send ended', ...slow });
      const second = test.call('system.run', { command: [process.execPath, '-e', '2'] });
      await eventually(() => waiting() > 0, { what: 'notify-send for the second request', ...slow });
      const started = performance.now();
      await tray.close();
      expect(performance.now() - started).toBeLessThan(10_000);
      await eventually(() => waiting() === 0, { what: 'notify-send ended on close', ...slow });
      // Closing the tray closed its in-process host, which denied what was still pending.
      expect((await second).isError).toBe(true);
    } finally {
      await tray.close();
      notifications.child.kill();
    }
  });
});

describe.runIf(process.platform === 'linux' && hasNotificationServer)('one notification per pending approval with the tray', () => {
  const hostNotice = (entry: Shown) => entry.summary === 'capnode: approval needed (system.run)' && entry.actions.length === 0;

  it('a host on its own raises its plain notification (what the tray turns off)', { timeout: 60_000 }, async () => {
    await using display = await startTestDisplay();
    const notifications = await startNotificationServer(display.env, '');
    await using test = await startTestHost({ clientName: 'host-notify', host: { env: display.env } });
    try {
      const call = test.call('system.run', { command: [process.execPath, '-e', '1'] });
      await eventually(() => notifications.shown.some(hostNotice), { what: "the host's own notification", ...slow });
      test.host.approvals.resolve(test.host.approvals.list()[0]!.id, 'deny');
      await call;
    } finally {
      notifications.child.kill();
    }
  });

  it("the tray's in-process host (inProcessHostOptions) leaves it to the tray: only the actionable notification is raised", { timeout: 60_000 }, async () => {
    await using display = await startTestDisplay();
    using bin = tempDir('capnode-tray-bin-');
    const notifications = await startNotificationServer(display.env, '');
    await using test = await startTestHost({ clientName: 'tray-notify-once', host: inProcessHostOptions({ env: display.env }) });
    await using tray = await startTray({ link: createInProcessLink(test.host), env: display.env, helperFile: runnableTrayHelper(bundledTrayHelper(), join(bin.path, 'cache')), onLog: () => {} });
    try {
      const call = test.call('system.run', { command: [process.execPath, '-e', '1'] });
      await eventually(() => notifications.shown.some((entry) => entry.actions.includes('open')), { what: 'the tray notification', ...slow });
      // The host's notice would be spawned with the request, beside the tray's: give it time to show up.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(notifications.shown).toHaveLength(1);
      expect(notifications.shown.some(hostNotice)).toBe(false);
      test.host.approvals.resolve(test.host.approvals.list()[0]!.id, 'deny');
      await call;
      await eventually(() => tray.state().pendingApprovals === 0, { what: 'no pending approval', ...slow });
    } finally {
      notifications.child.kill();
    }
  });
});

/** notify-send processes talking to the bus at `address` (only this test's carry that environment). */
function spawnSyncPgrep(address: string): number {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('notify-send') && readFileSync(`/proc/${pid}/environ`, 'utf8').includes(address);
      } catch {
        return false;
      }
    }).length;
}
