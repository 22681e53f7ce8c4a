import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { findChromiumExecutable } from '@capnode/capabilities/pack';
import { describe, expect, it } from 'vitest';
import { cliPath, repoRoot, tempHome } from '../cli/helpers.js';
import { FORM_PAGE, refFor, servePages } from '../support/pages.js';

// The SDK client is a devDependency of the CLI package; tests/ has no node_modules of its own.
const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');
const { StdioClientTransport } = requireFromCli('@modelcontextprotocol/client/stdio') as typeof import('@modelcontextprotocol/client/stdio');

interface Result {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

describe.runIf(findChromiumExecutable() && existsSync(cliPath))('the dedicated browser over stdio (capnode mcp, SDK v2 client, real Chromium)', { timeout: 90_000 }, () => {
  it('keeps its profile inside the config directory, snapshots a local page, types and clicks by ref', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ consent: { browser: 'allow' }, pluginSettings: { browser: { headless: true } } }), { mode: 0o600 });
    await using pages = await servePages({ '/form': FORM_PAGE });
    const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: dir.home }, stderr: 'pipe' });
    const client = new Client({ name: 'browser-stdio', version: '1.0.0' });
    await client.connect(transport);
    try {
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toEqual(expect.arrayContaining(['browser.status', 'browser.open', 'browser.navigate', 'browser.snapshot', 'browser.act', 'browser.screenshot', 'browser.text', 'browser.tabs', 'browser.close', 'browser.start', 'browser.stop']));
      const status = await call('browser.status', {});
      expect(status.structuredContent).toMatchObject({ running: false, headless: true, profileDir: join(dir.home, 'plugins-data', 'browser', 'profile') });

      expect((await call('browser.navigate', { url: pages.url('/form') })).structuredContent).toMatchObject({ title: 'Form page' });
      const snapshot = (await call('browser.snapshot', {})).structuredContent!.snapshot as string;
      expect((await call('browser.act', { action: { kind: 'type', ref: refFor(snapshot, 'textbox', 'Name'), text: 'Grace' } })).isError ?? false).toBe(false);
      expect((await call('browser.act', { action: { kind: 'click', ref: refFor(snapshot, 'button', 'Greet') } })).isError ?? false).toBe(false);
      expect((await call('browser.text', { selector: '#out' })).structuredContent).toMatchObject({ text: 'Hello, Grace (red)' });
      expect(existsSync(join(dir.home, 'plugins-data', 'browser', 'profile'))).toBe(true);
      expect((await call('browser.open', { url: 'file:///etc/passwd' })).isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
