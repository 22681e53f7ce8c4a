// One approval queue per user, in real Chromium: a real SDK stdio client spawns `capnode mcp` while a
// host runs; its approval shows on that host's dashboard and is answered there with "Allow once". An
// approval allowed while the agent is not waiting stays on the page until the retry runs it.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../cli/helpers.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import type { TestHost } from '../support/testHost.js';
import { startDashboardHost, type DashboardHost } from './e2eHost.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');
const { StdioClientTransport } = requireFromCli('@modelcontextprotocol/client/stdio') as typeof import('@modelcontextprotocol/client/stdio');

let browser: TestBrowser;
let ui: DashboardHost;
let test: TestHost;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
  // `auto`: the first client (no progress token) is held; the second case turns the hold off to see an answer kept for the retry.
  ui = await startDashboardHost(browser, { settings: { approvals: { wait: 'auto', notify: false } } });
  ({ test, page } = ui);
});

afterAll(async () => {
  await ui?.[Symbol.asyncDispose]();
  await browser?.close();
});

async function stdioClient(name: string) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: test.home }, stderr: 'pipe' });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

async function openApprovals(): Promise<void> {
  await page.goto(new URL('#/approvals', page.url()).href);
  await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
}

describe('approvals of capnode mcp on the running host\'s dashboard (Chromium)', () => {
  it('a stdio client\'s held system.run is answered with "Allow once" in the page and returns its result in one call', async () => {
    await using client = await stdioClient('claude-desktop-e2e');
    await openApprovals();
    const call = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)'] } });
    const card = page.getByRole('article').filter({ hasText: 'claude-desktop-e2e' });
    await card.waitFor({ timeout: 15_000 });
    await card.getByRole('button', { name: 'Allow once', exact: true }).click();
    const result = (await call) as { isError?: boolean; structuredContent?: { stdout?: string } };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ stdout: '42\n' });
    await expect.poll(() => page.getByText('Nothing waits for an answer.').isVisible()).toBe(true);
  });

  it('an approval allowed while the agent is not waiting shows "Allowed — runs when the agent retries" until the retry runs it', async () => {
    await test.host.settings.update((settings) => ({ ...settings, approvals: { ...settings.approvals, holdMs: 0 } }));
    await using client = await stdioClient('retrying-agent');
    await openApprovals();
    const params = { name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(7*6)'] } };
    const first = (await client.callTool(params)) as { isError?: boolean; content?: { text?: string }[] };
    expect(first.isError).toBe(true);
    expect(first.content?.[0]?.text).toContain('Approvals page of the capnode dashboard');
    const card = page.getByRole('article').filter({ hasText: 'retrying-agent' });
    await card.getByRole('button', { name: 'Allow once', exact: true }).click();
    await expect.poll(() => card.innerText(), { timeout: 10_000 }).toMatch(/Allowed — runs when the agent retries \(\d+ (min \d+ )?s left\)/);
    const retried = (await client.callTool(params)) as { isError?: boolean; structuredContent?: { stdout?: string } };
    expect(retried.structuredContent).toMatchObject({ stdout: '42\n' });
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(0);
  });
});
