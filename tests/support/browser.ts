/// <reference lib="dom" />
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Host } from '@capnode/host';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { mintLoginUrl } from './dashboardLogin.js';

/** Debian's Chromium (`.ci/run` installs it); `CAPNODE_CHROMIUM` points elsewhere. */
export const CHROMIUM_PATH = process.env.CAPNODE_CHROMIUM ?? '/usr/bin/chromium';

/** Where page screenshots are kept as test artifacts. */
export const DASHBOARD_ARTIFACTS = join(import.meta.dirname, '..', '..', '.tmp', 'artifacts', 'dashboard');

/**
 * Flags for Chromium on a machine with a closed network: no background connections, no updates,
 * no sync, no QUIC. Playwright adds --headless and a fresh --user-data-dir per launch.
 */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export type TestBrowser = Browser & AsyncDisposable;

/** Launches headless Chromium (one per test file; contexts are cheap). */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

/** A browser context (own cookies) that closes on dispose. */
export async function newContext(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext & AsyncDisposable> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, ...options });
  // Fail with the locator that was waited for, well before the test's own timeout.
  context.setDefaultTimeout(10_000);
  return Object.assign(context, { [Symbol.asyncDispose]: () => context.close() });
}

/** Saves a full-page screenshot to `.tmp/artifacts/dashboard/<name>.png` and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(DASHBOARD_ARTIFACTS, { recursive: true });
  const path = join(DASHBOARD_ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Roles whose nodes must carry an accessible name. */
const NAMED_ROLES = ['button', 'link', 'textbox', 'checkbox', 'combobox', 'listbox', 'radio', 'searchbox', 'spinbutton', 'slider', 'switch', 'tab', 'menuitem', 'navigation', 'region', 'dialog', 'form', 'group'];

/**
 * The controls in `root`'s accessibility tree (Chromium's, through Playwright's ARIA snapshot)
 * whose role needs a name but which have none, as the snapshot lines that show them.
 */
export async function unnamedControls(root: Locator): Promise<string[]> {
  const snapshot = await root.ariaSnapshot();
  const unnamed: string[] = [];
  for (const line of snapshot.split('\n')) {
    const match = /^\s*- ([a-z]+)(.*)$/.exec(line);
    if (!match) continue;
    const [, role, rest] = match;
    if (!NAMED_ROLES.includes(role!)) continue;
    // Landmarks and groups without a name are allowed to be plain containers; controls are not.
    if (['region', 'form', 'group', 'navigation'].includes(role!) && !/^ "/.test(rest!)) continue;
    if (!/^ ("|\/)/.test(rest!)) unnamed.push(line.trim());
  }
  return unnamed;
}

/** Every enabled, visible interactive element of the page, tagged with `data-e2e-control` indexes. */
export async function tagControls(page: Page): Promise<{ index: number; description: string }[]> {
  return page.evaluate(() => {
    const selector = 'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])';
    const controls = [...document.querySelectorAll<HTMLElement>(selector)].filter((element) => {
      if ((element as HTMLButtonElement).disabled) return false;
      if (element.getAttribute('tabindex') === '-1') return false;
      const style = getComputedStyle(element);
      if (style.visibility === 'hidden' || style.display === 'none') return false;
      // The skip link sits off screen until focused; everything else must have a box.
      return element.classList.contains('skip') || element.getClientRects().length > 0;
    });
    return controls.map((element, index) => {
      element.dataset.e2eControl = String(index);
      const label = element.getAttribute('aria-label') ?? element.textContent?.trim() ?? '';
      return { index, description: `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''} "${label.slice(0, 60)}"` };
    });
  });
}

/**
 * Presses Tab from the top of the page until focus comes back around (or `limit` presses), and
 * returns the `data-e2e-control` indexes that got focus, in order.
 */
export async function tabThrough(page: Page, limit = 300): Promise<number[]> {
  // Focus a marker before everything (tabindex -1: not itself in the order), so Tab starts at the top.
  await page.evaluate(() => {
    window.scrollTo(0, 0);
    let start = document.getElementById('e2e-tab-start');
    if (!start) {
      start = document.createElement('span');
      start.id = 'e2e-tab-start';
      start.tabIndex = -1;
      document.body.prepend(start);
    }
    start.focus();
  });
  const reached: number[] = [];
  for (let press = 0; press < limit; press += 1) {
    await page.keyboard.press('Tab');
    const { index, inPage } = await page.evaluate(() => {
      const active = document.activeElement as HTMLElement | null;
      return { index: active?.dataset.e2eControl, inPage: active !== null && active !== document.body };
    });
    // Focus left the page (past the last control): the round is complete.
    if (!inPage) break;
    // A control that appeared after tagging: not counted, the round goes on.
    if (index === undefined) continue;
    const value = Number(index);
    if (reached.includes(value)) break;
    reached.push(value);
  }
  return reached;
}

/** Logs `context` in through a fresh one-time URL of the host whose config directory is `home`; returns a page on the dashboard. */
export async function openDashboard(context: BrowserContext, host: Host, home: string): Promise<Page> {
  const page = await context.newPage();
  const response = await page.goto(await mintLoginUrl(host, home));
  if (!response?.ok()) throw new Error(`the login URL answered ${response?.status()}`);
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
  return page;
}
