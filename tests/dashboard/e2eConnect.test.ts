// Connect a client in real Chromium against a real host: the snippet with Copy, and "Add to Cursor",
// which shows the change first and then writes the user's Cursor config, keeping their other entries.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, saveScreenshot, unnamedControls, type TestBrowser } from '../support/browser.js';
import type { TestHost } from '../support/testHost.js';
import { startDashboardHost, type DashboardHost } from './e2eHost.js';

let browser: TestBrowser;
let ui: DashboardHost;
let test: TestHost;
let page: Page;
let userHome: string;

/** The named client tokens of the host's config directory. */
function clientTokens(home: string): Array<{ name: string; token: string }> {
  return (JSON.parse(readFileSync(join(home, 'mcp-tokens.json'), 'utf8')) as { tokens: Array<{ name: string; token: string }> }).tokens;
}

const OTHER = { command: '/usr/bin/true', args: ['--keep-me'] };

beforeAll(async () => {
  browser = await launchBrowser();
  ui = await startDashboardHost(browser, { cursorServers: { other: OTHER }, context: { permissions: ['clipboard-read', 'clipboard-write'] } });
  ({ test, page } = ui);
  userHome = ui.userHome!;
});

afterAll(async () => {
  await ui?.[Symbol.asyncDispose]();
  await browser?.close();
});

describe('Connect a client (Chromium, real host)', () => {
  it('lists the clients with snippets; Copy puts the snippet on the clipboard', async () => {
    await page.goto(new URL('#/connect', page.url()).href);
    await page.getByRole('heading', { level: 1, name: 'Connect a client' }).waitFor();
    for (const name of ['Claude Code', 'Claude Desktop', 'Cursor', 'VS Code']) await page.getByRole('region', { name }).waitFor();
    const cursor = page.getByRole('region', { name: 'Cursor' });
    await cursor.getByRole('button', { name: 'Copy Cursor snippet' }).click();
    // Copy fetches the unmasked token first, so the clipboard fills a moment after the click.
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText()), { timeout: 10_000 }).toContain(new URL(test.url).host);
    // The clipboard holds Cursor's own token (named after it); the page shows no token in clear anywhere.
    const tokens = clientTokens(test.home);
    expect(tokens.map((entry) => entry.name).sort()).toEqual(['claude', 'cursor']);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(`Bearer ${tokens.find((entry) => entry.name === 'cursor')!.token}`);
    const shown = await page.locator('body').innerText();
    const html = await page.content();
    for (const secret of [readFileSync(join(test.home, 'mcp-token'), 'utf8').trim(), ...tokens.map((entry) => entry.token)]) {
      expect(shown).not.toContain(secret);
      expect(html).not.toContain(secret);
    }
    expect(shown).toContain('••••••••');
    expect(await unnamedControls(page.locator('body'))).toEqual([]);
    await saveScreenshot(page, 'connect');
  });

  it('"Add to Cursor" shows the diff first, then writes the config with a backup and the user\'s other entry kept', async () => {
    const file = join(userHome, '.cursor', 'mcp.json');
    const before = readFileSync(file, 'utf8');
    await page.goto(new URL('#/connect', page.url()).href);
    const cursor = page.getByRole('region', { name: 'Cursor' });
    await cursor.getByRole('button', { name: 'Add to Cursor' }).click();
    const preview = cursor.getByRole('region', { name: /^Change to / });
    await preview.waitFor();
    expect(await preview.locator('pre.diff').innerText()).toContain('capnode');
    // Nothing is written before the confirmation.
    expect(readFileSync(file, 'utf8')).toBe(before);
    await saveScreenshot(page, 'connect-diff');
    await preview.getByRole('button', { name: 'Write to Cursor config' }).click();
    await expect.poll(() => cursor.getByRole('status').last().innerText()).toMatch(/^Written to /);
    const written = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, unknown> };
    expect(written.mcpServers.other).toEqual(OTHER);
    expect(Object.keys(written.mcpServers)).toContain('capnode');
    const notice = await cursor.getByRole('status').last().innerText();
    const backup = /backup: ([^)]+)\)/.exec(notice)?.[1];
    expect(backup, notice).toBeDefined();
    expect(existsSync(backup!) && readFileSync(backup!, 'utf8')).toBe(before);
  });
});
