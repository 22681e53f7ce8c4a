// MCP servers in real Chromium against a real host: a real stdio MCP server is added through the
// form (its env value write-only), disabled, enabled and removed; settings.json follows each step.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, saveScreenshot, unnamedControls, type TestBrowser } from '../support/browser.js';
import type { TestHost } from '../support/testHost.js';
import { startDashboardHost, type DashboardHost } from './e2eHost.js';

const FIXTURE = join(import.meta.dirname, '..', 'mcp-client', 'fixtures', 'stdioServer.mjs');

let browser: TestBrowser;
let ui: DashboardHost;
let test: TestHost;
let page: Page;
let userHome: string;

interface ServerEntry {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  enabled?: boolean;
}
const riskProfile = (home: string) =>
  (JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as { mcpClient?: { risk_profiles?: Record<string, { excluded_tools?: string[]; auto_approve?: string[]; always_ask?: string[] }> } }).mcpClient?.risk_profiles?.capnode;
const serversOf = (home: string): ServerEntry[] => (JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as { mcpClient?: { servers?: ServerEntry[] } }).mcpClient?.servers ?? [];

beforeAll(async () => {
  browser = await launchBrowser();
  // The user's home (where client configs are looked for) is a temporary directory with one Cursor config.
  ui = await startDashboardHost(browser, { settings: { mcpClient: { reexport: true, servers: [] } }, cursorServers: { cursorfix: { command: process.execPath, args: [FIXTURE, 'ok'] } } });
  ({ test, page } = ui);
  userHome = ui.userHome!;
});

afterAll(async () => {
  await ui?.[Symbol.asyncDispose]();
  await browser?.close();
});

describe('MCP servers page (Chromium, real host)', () => {
  it('adds a real stdio server with a write-only env value, tests it, sets per-tool choices, disables, enables and removes it', async () => {
    await page.goto(new URL('#/servers', page.url()).href);
    await page.getByRole('heading', { level: 1, name: 'MCP servers' }).waitFor();
    const form = page.getByRole('form', { name: 'Add a server' });
    await form.getByLabel('Server name').fill('fixture');
    await form.getByLabel('Transport').selectOption('stdio');
    await form.getByLabel('Command', { exact: true }).fill(process.execPath);
    await form.getByLabel('Arguments').fill(`"${FIXTURE}" ok`);
    await form.getByRole('button', { name: 'Add variable' }).click();
    await form.getByLabel('Variable 1 name').fill('FIXTURE_SECRET');
    const secret = form.getByLabel('Variable 1 value');
    expect(await secret.getAttribute('type')).toBe('password');
    await secret.fill('s3cret-value-123');
    await form.getByRole('button', { name: 'Add server' }).click();

    const card = page.getByRole('article', { name: /^fixture/ });
    await card.waitFor();
    expect(serversOf(test.home)).toEqual([expect.objectContaining({ name: 'fixture', command: process.execPath, args: [FIXTURE, 'ok'], env: { FIXTURE_SECRET: 's3cret-value-123' } })]);
    // The value never comes back to the page: only the variable's name shows.
    expect(await card.innerText()).toContain('FIXTURE_SECRET');
    expect(await page.locator('body').innerText()).not.toContain('s3cret-value-123');
    expect(await page.content()).not.toContain('s3cret-value-123');
    expect(await unnamedControls(page.locator('body'))).toEqual([]);

    // Test: the host connects the real server once and lists its tools; per-tool choices follow.
    await card.getByRole('button', { name: 'Test fixture' }).click();
    await expect.poll(() => card.getByRole('status').innerText(), { timeout: 20_000 }).toMatch(/^Test passed: connected, \d+ tools/);
    const tools = card.getByRole('table', { name: 'Tools of fixture' });
    await tools.waitFor();
    await tools.getByRole('checkbox', { name: 'Enable fixture__echo' }).uncheck();
    await expect.poll(() => riskProfile(test.home)?.excluded_tools).toEqual(['fixture__echo']);
    await tools.getByRole('combobox', { name: 'Approval for fixture__slow' }).selectOption('auto');
    await expect.poll(() => riskProfile(test.home)?.auto_approve).toEqual(['fixture__slow']);
    await tools.getByRole('combobox', { name: 'Approval for fixture__hang' }).selectOption('ask');
    await expect.poll(() => riskProfile(test.home)?.always_ask).toEqual(['fixture__hang']);
    await saveScreenshot(page, 'servers-added');
    // The page shows the stored choices again after a reload.
    await page.reload();
    await card.waitFor();
    await card.getByRole('button', { name: 'Tools of fixture' }).click();
    expect(await tools.getByRole('checkbox', { name: 'Enable fixture__echo' }).isChecked()).toBe(false);
    expect(await tools.getByRole('combobox', { name: 'Approval for fixture__slow' }).inputValue()).toBe('auto');
    await tools.getByRole('checkbox', { name: 'Enable fixture__echo' }).check();
    await expect.poll(() => riskProfile(test.home)?.excluded_tools).toEqual([]);
    expect(await unnamedControls(page.locator('body'))).toEqual([]);

    await card.getByRole('button', { name: 'Disable fixture' }).click();
    await expect.poll(() => serversOf(test.home)[0]?.enabled).toBe(false);
    await card.getByRole('button', { name: 'Enable fixture' }).waitFor();
    expect(await card.innerText()).toContain('disabled');
    await card.getByRole('button', { name: 'Enable fixture' }).click();
    await expect.poll(() => serversOf(test.home)[0]?.enabled).toBe(true);
    // The stored secret survives the edits (the masked value is never written back).
    expect(serversOf(test.home)[0]?.env).toEqual({ FIXTURE_SECRET: 's3cret-value-123' });

    await card.getByRole('button', { name: 'Remove fixture' }).click();
    // Asked first; the confirm button has focus.
    const confirm = page.getByRole('button', { name: 'Remove fixture now' });
    await expect.poll(() => confirm.evaluate((element) => element === document.activeElement)).toBe(true);
    await confirm.click();
    await expect.poll(() => serversOf(test.home).length).toBe(0);
    await expect.poll(() => page.getByText('No MCP servers are configured.').isVisible()).toBe(true);
  });

  it('refuses an invalid server with the host\'s error beside the field, writing nothing', async () => {
    await page.goto(new URL('#/servers', page.url()).href);
    const form = page.getByRole('form', { name: 'Add a server' });
    await form.getByLabel('Server name').fill('bad name!');
    await form.getByLabel('Transport').selectOption('http');
    await form.getByLabel('Server URL').fill('ftp://example.invalid/');
    await form.getByRole('button', { name: 'Add server' }).click();
    await expect.poll(() => form.getByRole('alert').count()).toBeGreaterThan(0);
    expect(serversOf(test.home)).toEqual([]);
  });

  it('imports a server from a Cursor config found in the user\'s home', async () => {
    await page.goto(new URL('#/servers', page.url()).href);
    const config = join(userHome, '.cursor', 'mcp.json');
    const section = page.getByRole('region', { name: 'Import from other clients' });
    await section.getByText(config).waitFor();
    await section.getByRole('button', { name: `Import cursorfix from ${config}` }).click();
    await expect.poll(() => serversOf(test.home).map((server) => server.name)).toEqual(['cursorfix']);
    await expect.poll(() => section.innerText()).toContain('Imported cursorfix');
    await expect.poll(() => section.innerText()).toContain('(already configured)');
    await page.getByRole('article', { name: /^cursorfix/ }).waitFor();
    expect(await unnamedControls(page.locator('body'))).toEqual([]);
    await saveScreenshot(page, 'servers-import');
  });

  it('the status page shows each imported server live: state, tools, and the failing one\'s error', async () => {
    await using imports = await startDashboardHost(browser, {
      settings: {
        mcpClient: {
          reexport: true,
          servers: [
            { name: 'good', command: process.execPath, args: [FIXTURE, 'ok'] },
            { name: 'broken', command: process.execPath, args: [FIXTURE, 'exit-at-start'] },
          ],
        },
      },
    });
    const status = imports.page;
    await status.goto(new URL('#/status', status.url()).href);
    const section = status.getByRole('region', { name: 'Imported MCP servers' });
    const good = section.getByRole('row', { name: /^good/ });
    const broken = section.getByRole('row', { name: /^broken/ });
    // Live: the servers connect after the page opened; the page follows without a reload.
    // Connected, then its tools listed (the count follows when the listing arrives).
    await expect.poll(async () => Number(/connected\s+(\d+)/.exec(await good.innerText())?.[1] ?? 0), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => broken.innerText(), { timeout: 20_000 }).toMatch(/failed/);
    // The failure says why (scrubbed of the secret the fixture prints).
    expect(await broken.innerText()).toMatch(/exit|closed|start/i);
    expect(await broken.innerText()).not.toContain('abcdef123456');
    expect(await unnamedControls(status.locator('body'))).toEqual([]);
    await saveScreenshot(status, 'status-imports');
  });
});
