// Every dashboard page in real Chromium against a real host: live status, an approval answered in
// the page while an SDK v2 client waits on system.run, the exec policy edited and tested, token
// rotation seen by a client, and every control named and reachable by Tab. Screenshots of each page
// go to .tmp/artifacts/dashboard/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newContext, openDashboard, saveScreenshot, tabThrough, tagControls, unnamedControls, type TestBrowser } from '../support/browser.js';
import { connectHttpClient, type TestHost } from '../support/testHost.js';
import { startDashboardHost, type DashboardHost } from './e2eHost.js';

let browser: TestBrowser;
let ui: DashboardHost;
let test: TestHost;
let page: Page;

const tokenOf = (home: string) => readFileSync(join(home, 'mcp-token'), 'utf8').trim();
const settingsOf = (home: string) => JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as Record<string, Record<string, unknown>>;

beforeAll(async () => {
  browser = await launchBrowser();
  ui = await startDashboardHost(browser, { settings: { approvals: { wait: 'block', notify: false } }, context: { permissions: ['clipboard-read', 'clipboard-write'] } });
  ({ test, page } = ui);
});

afterAll(async () => {
  await ui?.[Symbol.asyncDispose]();
  await browser?.close();
});

async function go(id: string, title: string): Promise<void> {
  await page.goto(new URL(`#/${id}`, page.url()).href);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
  // Wait until no "Loading …" placeholder is left.
  await expect.poll(() => page.getByText(/^Loading /).count(), { timeout: 10_000 }).toBe(0);
}

const connectClient = (url: string, token: string): Promise<Client> => connectHttpClient(url, token, 'dashboard-e2e');

describe('dashboard pages (Chromium, real host)', () => {
  it('status is live: the MCP listener with its URL, the gateway node apart from it, changes without a reload', async () => {
    await go('status', 'Status');
    const mcp = page.getByRole('region', { name: 'Local MCP server' });
    await expect.poll(() => mcp.innerText()).toContain(test.url);
    expect(await mcp.innerText()).toContain('listening');
    // A working listener is not a gateway connection: node mode is off and says so.
    const node = page.getByRole('region', { name: 'Gateway node' });
    const nodeText = await node.innerText();
    expect(nodeText).toContain('off');
    expect(nodeText).not.toMatch(/listening|connected\b/);
    expect(nodeText).not.toContain(test.url);
    const channel = page.getByRole('region', { name: 'Gateway channel' });
    expect(await channel.innerText()).toContain('off');
    // A change on the host reaches the open page through /api/events.
    await test.host.settings.update((settings) => ({ ...settings, channel: { enabled: true } }));
    await expect.poll(() => channel.innerText(), { timeout: 10_000 }).toContain('on');
    await test.host.settings.update((settings) => ({ ...settings, channel: { enabled: false } }));
    await expect.poll(() => channel.innerText(), { timeout: 10_000 }).toContain('off');
  });

  it('an approval is answered with "Allow once" in the page while an SDK v2 client waits on system.run', async () => {
    await go('status', 'Status');
    const hostile = '<img src=x onerror="window.__pwned=1">';
    const call = test.client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)', hostile] } });
    // The count shows on every page's nav, live.
    const count = page.getByTestId('pending-count');
    await expect.poll(() => count.innerText(), { timeout: 10_000 }).toMatch(/1\s*pending/);
    await page.getByRole('link', { name: /Approvals/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
    const [pending] = test.host.approvals.list();
    expect(pending).toBeDefined();
    const card = page.getByRole('article').filter({ hasText: pending!.id });
    await card.waitFor();
    // The summary is text: the markup in the argument shows as characters, nothing is parsed.
    const summary = await card.locator('pre.summary').innerText();
    expect(summary).toContain('system.run');
    expect(summary).toContain('<img');
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await card.innerText()).toMatch(/Denied automatically in \d/);
    for (const name of ['Allow once', 'Allow always', 'Deny']) expect(await card.getByRole('button', { name, exact: true }).isEnabled()).toBe(true);
    await saveScreenshot(page, 'approvals-escaped');
    await card.getByRole('button', { name: 'Allow once', exact: true }).click();
    const result = (await call) as { isError?: boolean; structuredContent?: { stdout?: string; exitCode?: number } };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ stdout: '42\n', exitCode: 0 });
    await expect.poll(() => page.getByText('Nothing waits for an answer.').isVisible()).toBe(true);
    await expect.poll(() => count.innerText()).toMatch(/0\s*pending/);
  });

  it('an approval is answered from the keyboard alone: Tab to "Deny", Enter', async () => {
    await go('approvals', 'Approvals');
    const call = test.client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(1)'] } });
    const card = page.getByRole('article');
    await card.waitFor();
    await saveScreenshot(page, 'approvals');
    await page.evaluate(() => (document.getElementById('page-title') as HTMLElement | null)?.focus());
    let focused = '';
    for (let press = 0; press < 40 && focused !== 'Deny'; press += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.textContent?.trim() ?? '');
    }
    expect(focused).toBe('Deny');
    await page.keyboard.press('Enter');
    const result = (await call) as { isError?: boolean };
    expect(result.isError).toBe(true);
    await expect.poll(() => page.getByText('Nothing waits for an answer.').isVisible()).toBe(true);
  });

  it('the exec policy is edited in Settings (mode, allowlist, a refused port) and the tester judges commands', async () => {
    const pattern = `${process.execPath} *`;
    await go('settings', 'Settings');
    await page.getByLabel('Exec policy mode').selectOption('allowlist');
    await page.getByLabel('New allowlist pattern').fill(pattern);
    await page.getByRole('button', { name: 'Add pattern' }).click();
    await expect.poll(() => page.getByRole('button', { name: `Remove ${pattern} from the allowlist` }).count()).toBe(1);
    // An invalid port is refused by the host, named beside its field, and nothing is written.
    await page.getByLabel('MCP port').fill('99999');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const port = page.getByLabel('MCP port');
    await expect.poll(() => port.getAttribute('aria-invalid')).toBe('true');
    await saveScreenshot(page, 'settings-error');
    expect(settingsOf(test.home).execApprovals?.mode).not.toBe('allowlist');
    await port.fill(String(settingsOf(test.home).mcp?.port ?? 8765));
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByText(/^Saved\./).isVisible()).toBe(true);
    expect(settingsOf(test.home).execApprovals).toEqual({ mode: 'allowlist', allowlist: [pattern] });
    // The host applies the policy live: a command outside the allowlist is refused at once.
    const refused = await test.call('system.run', { command: ['/bin/sh', '-c', 'true'] });
    expect(refused.isError).toBe(true);

    const tester = page.getByRole('region', { name: 'Would this command be allowed?' });
    await tester.getByLabel('Command to test').fill(`${process.execPath} -e 1`);
    await tester.getByRole('button', { name: 'Test command' }).click();
    await expect.poll(() => page.getByTestId('exec-verdict').innerText()).toMatch(/^Allowed/);
    await tester.getByLabel('Command to test').fill('/bin/ls /');
    await tester.getByRole('button', { name: 'Test command' }).click();
    await expect.poll(() => page.getByTestId('exec-verdict').innerText()).toMatch(/^Refused/);
    await saveScreenshot(page, 'settings-tester');
    // Back to asking, through the page.
    await page.getByLabel('Exec policy mode').selectOption('ask');
    await page.getByRole('button', { name: `Remove ${pattern} from the allowlist` }).click();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => settingsOf(test.home).execApprovals).toEqual({ mode: 'ask', allowlist: [] });
  });

  it('the token is masked, revealed, and rotated after a confirmation; a client sees the rotation', async () => {
    const before = tokenOf(test.home);
    await go('token', 'Token');
    const value = page.getByTestId('token-value');
    expect(await value.innerText()).not.toContain(before);
    expect(await page.getByRole('region', { name: 'MCP token' }).innerText()).toContain(join(test.home, 'mcp-token'));
    await page.getByRole('button', { name: 'Reveal' }).click();
    await expect.poll(() => value.innerText()).toBe(before);
    await page.getByRole('button', { name: 'Hide' }).click();
    await expect.poll(() => value.innerText()).not.toBe(before);
    await page.getByRole('button', { name: 'Rotate token' }).click();
    // Nothing happens before the confirmation; Cancel keeps the token.
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(tokenOf(test.home)).toBe(before);
    await page.getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await expect.poll(() => page.getByText(/^Token rotated/).isVisible()).toBe(true);
    const after = tokenOf(test.home);
    expect(after).not.toBe(before);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(after);
    expect(await page.getByTestId('token-value').innerText()).not.toBe(after);
    await saveScreenshot(page, 'token');
    // The old token is refused, the new one works.
    await expect(connectClient(test.url, before)).rejects.toThrow();
    const fresh = await connectClient(test.url, after);
    try {
      expect((await fresh.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  });

  it('activity lists the audit log newest first, filters by tool, transport and outcome, and pages', async () => {
    // A client with the current token (an earlier test rotated it).
    const client = await connectClient(test.url, tokenOf(test.home));
    try {
      for (let index = 0; index < 27; index += 1) expect((await client.callTool({ name: 'app.status', arguments: {} })).isError ?? false).toBe(false);
      test.answerWith('deny');
      expect((await client.callTool({ name: 'system.run', arguments: { command: ['/bin/true'] } })).isError).toBe(true);
    } finally {
      test.answerWith(undefined);
      await client.close();
    }
    await go('activity', 'Activity');
    const rows = page.locator('table.activity tbody tr');
    await expect.poll(() => rows.count()).toBe(25);
    // Newest first: the denied system.run came last.
    expect(await rows.first().innerText()).toMatch(/system\.run[\s\S]*denied/);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('Page 2').waitFor();
    await expect.poll(async () => (await rows.count()) > 0).toBe(true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByText('Page 1').waitFor();
    await page.getByLabel('Outcome').selectOption('denied');
    await page.getByLabel('Transport').selectOption('mcp-http');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => {
      const texts = await rows.allInnerTexts();
      return texts.length > 0 && texts.every((text) => /denied/.test(text) && text.includes('mcp-http'));
    }).toBe(true);
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Tool').fill('app.status');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => {
      const texts = await rows.allInnerTexts();
      return texts.length > 0 && texts.every((text) => text.includes('app.status'));
    }).toBe(true);
    expect(await page.getByRole('button', { name: 'Older' }).isEnabled()).toBe(true);
    // The Settings and token tests' changes are there, by setting path (never value), under transport "dashboard".
    await page.getByLabel('Tool').fill('');
    await page.getByLabel('Transport').selectOption('dashboard');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => {
      const texts = await rows.allInnerTexts();
      return texts.length > 0 && texts.every((text) => text.includes('dashboard')) && texts.some((text) => /capnode\.settings[\s\S]*execApprovals\.allowlist/.test(text)) && texts.some((text) => text.includes('capnode.token.rotate'));
    }).toBe(true);
    await expect.poll(() => page.getByRole('list', { name: 'Settings changed' }).first().isVisible()).toBe(true);
    await saveScreenshot(page, 'activity');
  });

  it('the gateway page saves a URL and a write-only token, and says a restart is needed', async () => {
    await go('gateway', 'Gateway');
    const form = page.getByRole('form', { name: 'Gateway connection' });
    await form.getByLabel('Gateway URL').fill('not a url');
    await form.getByRole('button', { name: 'Connect to gateway' }).click();
    await expect.poll(() => form.getByLabel('Gateway URL').getAttribute('aria-invalid')).toBe('true');
    await form.getByLabel('Gateway URL').fill('ws://127.0.0.1:9');
    await form.getByLabel('Gateway token').fill('gateway-secret-456');
    await form.getByRole('button', { name: 'Connect to gateway' }).click();
    await expect.poll(() => settingsOf(test.home).gateway?.url).toBe('ws://127.0.0.1:9');
    expect(settingsOf(test.home).gateway?.token).toBe('gateway-secret-456');
    await expect.poll(() => page.getByText(/^Saved\./).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await form.getByLabel('Gateway token').inputValue()).toBe('');
    expect(await page.content()).not.toContain('gateway-secret-456');
    // Back off, so the rest of the suite runs without a gateway node.
    await test.host.settings.update((settings) => ({ ...settings, gateway: { enabled: false } }));
  });

  const PAGES: [string, string][] = [
    ['setup', 'Setup'],
    ['status', 'Status'],
    ['approvals', 'Approvals'],
    ['connect', 'Connect a client'],
    ['token', 'Token'],
    ['settings', 'Settings'],
    ['servers', 'MCP servers'],
    ['gateway', 'Gateway'],
    ['openagent', 'OpenAgent'],
    ['activity', 'Activity'],
  ];

  it.each(PAGES)('page %s: every control has a name, Tab reaches every control, screenshot kept', async (id, title) => {
    await go(id, title);
    expect(await unnamedControls(page.locator('body'))).toEqual([]);
    const controls = await tagControls(page);
    expect(controls.length).toBeGreaterThan(8);
    const reached = await tabThrough(page);
    const missed = controls.filter((control) => !reached.includes(control.index)).map((control) => control.description);
    expect(missed).toEqual([]);
    // The nav is a landmark with the current page marked.
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).locator('[aria-current="page"]').count()).toBe(id === 'setup' ? 0 : 1);
    await page.evaluate(() => {
      (document.activeElement as HTMLElement | null)?.blur();
      window.scrollTo(0, 0);
    });
    await saveScreenshot(page, id === 'approvals' ? 'approvals-empty' : id);
  });

  it('follows the system colour scheme (dark)', async () => {
    await using dark = await newContext(browser, { colorScheme: 'dark' });
    const darkPage = await openDashboard(dark, test.host, test.home);
    await darkPage.getByRole('heading', { level: 1 }).waitFor();
    await expect.poll(() => darkPage.getByRole('region', { name: 'Local MCP server' }).innerText()).toContain('listening');
    const background = await darkPage.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(21, 23, 27)');
    await saveScreenshot(darkPage, 'status-dark');
  });

  it('a change the host cannot apply live says plainly that a restart is needed', async () => {
    await go('settings', 'Settings');
    expect(await page.getByText('Restart needed:').count()).toBe(0);
    await page.getByLabel('MCP port').fill('18799');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const banner = page.getByRole('status').filter({ hasText: 'Restart needed:' });
    await expect.poll(() => banner.innerText()).toContain('mcp.port');
    expect(settingsOf(test.home).mcp?.port).toBe(18799);
    // The listener keeps serving where it is until then.
    expect(test.host.status().mcp.url).toBe(test.url);
    await page.reload();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Restart needed:' }).innerText()).toContain('mcp.port');
    await saveScreenshot(page, 'settings-restart');
  });
});
