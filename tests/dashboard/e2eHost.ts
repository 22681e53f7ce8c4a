import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newContext, openDashboard } from '../support/browser.js';
import { startTestHost, tempDir, type TestHost, type TestHostOptions } from '../support/testHost.js';

/** A real host with the dashboard on, a browser context and a page signed in to its dashboard. */
export interface DashboardHost extends AsyncDisposable {
  readonly test: TestHost;
  readonly context: BrowserContext & AsyncDisposable;
  readonly page: Page;
}

export interface DashboardHostOptions extends TestHostOptions {
  /** Options of the browser context (permissions, colour scheme). */
  readonly context?: Parameters<Browser['newContext']>[0];
}

/**
 * Starts a test host with the dashboard on 127.0.0.1 port 0 (beside `options.settings`), opens a
 * context in `browser` and signs it in. Disposal closes the context, then the host.
 */
export async function startDashboardHost(browser: Browser, options: DashboardHostOptions = {}): Promise<DashboardHost> {
  const { context: contextOptions, ...hostOptions } = options;
  const test = await startTestHost({ ...hostOptions, settings: { dashboard: { enabled: true, port: 0 }, ...hostOptions.settings } });
  let context: (BrowserContext & AsyncDisposable) | undefined;
  try {
    context = await newContext(browser, contextOptions);
    const page = await openDashboard(context, test.host, test.home);
    const opened = context;
    return {
      test,
      context: opened,
      page,
      [Symbol.asyncDispose]: async () => {
        await opened.close();
        await test[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await context?.close();
    await test[Symbol.asyncDispose]();
    throw error;
  }
}

/** A temporary user home (where client configs are looked for) holding one Cursor config with these `mcpServers`. */
export function cursorUserHome(mcpServers: Record<string, unknown>): ReturnType<typeof tempDir> {
  const home = tempDir('capnode-user-');
  mkdirSync(join(home.path, '.cursor'));
  writeFileSync(join(home.path, '.cursor', 'mcp.json'), `${JSON.stringify({ mcpServers }, null, 2)}\n`);
  return home;
}
