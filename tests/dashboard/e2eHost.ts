import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newContext, openDashboard } from '../support/browser.js';
import { startTestHost, tempDir, type TestHost, type TestHostOptions } from '../support/testHost.js';
import { userHomeEnv } from './apiClient.js';

/** A real host with the dashboard on, a browser context and a page signed in to its dashboard. */
export interface DashboardHost extends AsyncDisposable {
  readonly test: TestHost;
  readonly context: BrowserContext & AsyncDisposable;
  readonly page: Page;
  /** The host's user home (HOME, XDG_CONFIG_HOME, APPDATA) when `cursorServers` was given. */
  readonly userHome: string | undefined;
}

export interface DashboardHostOptions extends TestHostOptions {
  /** Options of the browser context (permissions, colour scheme). */
  readonly context?: Parameters<Browser['newContext']>[0];
  /**
   * Gives the host a temporary user home (where client configs are looked for) holding one Cursor
   * config, `.cursor/mcp.json`, with these `mcpServers`; removed on dispose.
   */
  readonly cursorServers?: Record<string, unknown>;
}

/**
 * Starts a test host with the dashboard on 127.0.0.1 port 0 (beside `options.settings`), opens a
 * context in `browser` and signs it in. Disposal closes the context, then the host, then removes the user home.
 */
export async function startDashboardHost(browser: Browser, options: DashboardHostOptions = {}): Promise<DashboardHost> {
  const { context: contextOptions, cursorServers, ...hostOptions } = options;
  const user = cursorServers === undefined ? undefined : cursorUserHome(cursorServers);
  let test: TestHost | undefined;
  let context: (BrowserContext & AsyncDisposable) | undefined;
  const dispose = async () => {
    await context?.close();
    await test?.[Symbol.asyncDispose]();
    user?.[Symbol.dispose]();
  };
  try {
    test = await startTestHost({
      ...hostOptions,
      settings: { dashboard: { enabled: true, port: 0 }, ...hostOptions.settings },
      ...(user ? { host: { env: userHomeEnv(user.path), ...hostOptions.host } } : {}),
    });
    context = await newContext(browser, contextOptions);
    const page = await openDashboard(context, test.host, test.home);
    return { test, context, page, userHome: user?.path, [Symbol.asyncDispose]: dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

function cursorUserHome(mcpServers: Record<string, unknown>): ReturnType<typeof tempDir> {
  const home = tempDir('capnode-user-');
  try {
    mkdirSync(join(home.path, '.cursor'));
    writeFileSync(join(home.path, '.cursor', 'mcp.json'), `${JSON.stringify({ mcpServers }, null, 2)}\n`);
    return home;
  } catch (error) {
    home[Symbol.dispose]();
    throw error;
  }
}
