import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBrowserCapability, findChromiumExecutable, probeBrowser } from '@capnode/capabilities/pack';
import { describe, expect, it } from 'vitest';
import { startPackHost, type RawToolResult } from '../support/packHost.js';
import { FORM_PAGE, refFor, servePages } from '../support/pages.js';
import { startTestHost, tempDir } from '../support/testHost.js';

const chromium = findChromiumExecutable();
const consent = { consent: { browser: 'allow' } };

describe.runIf(chromium)('the dedicated browser over MCP HTTP (SDK v2 client, real Chromium)', { timeout: 90_000 }, () => {
  it('snapshots a local page, types into its field and clicks its button by ref, then reads the result', async () => {
    using profile = tempDir('capnode-browser-');
    await using pages = await servePages({ '/form': FORM_PAGE });
    await using browser = createBrowserCapability({ profileDir: profile.path, headless: true });
    await using host = await startPackHost([browser], { settings: consent });

    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: false, profileDir: profile.path });
    const opened = await host.call('browser.open', { url: pages.url('/form') });
    expect(opened).toMatchObject({ isError: false, structured: { ok: true, url: pages.url('/form'), title: 'Form page' } });
    const tabId = opened.structured!.tabId as string;

    const snap = await host.call('browser.snapshot', {});
    expect(snap.isError).toBe(false);
    const snapshot = snap.structured!.snapshot as string;
    expect(snapshot).toContain('heading "Sign in"');
    const field = refFor(snapshot, 'textbox', 'Name');
    const select = refFor(snapshot, 'combobox', 'Color');
    const button = refFor(snapshot, 'button', 'Greet');

    expect(await host.call('browser.act', { action: { kind: 'type', ref: field, text: 'Ada ✓' } })).toMatchObject({ isError: false, structured: { tabId, kind: 'type' } });
    expect((await host.call('browser.act', { tabId, action: { kind: 'select', ref: select, values: ['blue'] } })).isError).toBe(false);
    expect((await host.call('browser.act', { action: { kind: 'click', ref: button } })).isError).toBe(false);
    expect(await host.call('browser.text', { selector: '#out' })).toMatchObject({ isError: false, structured: { text: 'Hello, Ada ✓ (blue)', truncated: false } });

    // The page text is cut at maxChars: an exact prefix, marked.
    expect((await host.call('browser.text', { maxChars: 4 })).structured).toMatchObject({ text: 'Sign', truncated: true });

    const shot = (await host.client.callTool({ name: 'browser.screenshot', arguments: { ref: button } })) as RawToolResult;
    const image = shot.content?.find((part) => part.type === 'image');
    expect(image?.mimeType).toBe('image/png');
    expect(Buffer.from(image!.data!, 'base64').subarray(1, 4).toString()).toBe('PNG');

    const tabs = await host.call('browser.tabs', {});
    expect(tabs.structured).toMatchObject({ running: true, tabs: [{ tabId, url: pages.url('/form'), title: 'Form page', active: true }] });
    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: true, tabs: 1 });
    expect(await host.call('browser.close', { tabId })).toMatchObject({ isError: false });
    expect((await host.call('browser.tabs', {})).structured).toMatchObject({ tabs: [] });
    expect((await host.call('browser.stop', {})).structured).toMatchObject({ stopped: true });
    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: false });
  });

  it('refuses every bad input with isError and its code, and keeps working', async () => {
    using profile = tempDir('capnode-browser-');
    await using pages = await servePages({ '/form': FORM_PAGE, '/other': '<title>Other</title><button>Other</button>' });
    await using browser = createBrowserCapability({ profileDir: profile.path, headless: true });
    await using host = await startPackHost([browser], { settings: consent });
    const failure = async (name: string, args: Record<string, unknown>) => {
      const result = (await host.client.callTool({ name, arguments: args })) as RawToolResult;
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      return { code: (result._meta?.['capnode/failure'] as { code?: string } | undefined)?.code, text: result.content?.map((part) => part.text).join('') ?? '' };
    };

    for (const url of ['file:///etc/passwd', 'FILE:///etc/passwd', 'javascript:alert(1)', 'data:text/html,<p>x', 'chrome://settings', 'view-source:http://127.0.0.1/', '/etc/passwd', 'about:config', '']) {
      expect((await failure('browser.open', { url })).code, url).toBe('invalid_arguments');
      expect((await failure('browser.navigate', { url })).code, url).toBe('invalid_arguments');
    }
    expect((await failure('browser.navigate', { url: `http://127.0.0.1/${'a'.repeat(9000)}` })).code).toBe('invalid_arguments');
    // No browser was started by any of them.
    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: false });

    await host.call('browser.navigate', { url: pages.url('/form') });
    // A ref before any snapshot, a made-up ref, a malformed ref, a ref of an earlier document.
    expect(await failure('browser.act', { action: { kind: 'click', ref: 'e1' } })).toMatchObject({ code: 'invalid_arguments', text: expect.stringMatching(/Unknown ref "e1"/) });
    const snapshot = (await host.call('browser.snapshot', {})).structured!.snapshot as string;
    const button = refFor(snapshot, 'button', 'Greet');
    expect((await failure('browser.act', { action: { kind: 'click', ref: 'e9999' } })).code).toBe('invalid_arguments');
    expect((await failure('browser.act', { action: { kind: 'click', ref: 'e1"]; x' } })).code).toBe('invalid_arguments');
    expect((await failure('browser.act', { action: { kind: 'click', ref: button, extra: 1 } })).code).toBe('invalid_arguments');
    expect((await failure('browser.act', { action: { kind: 'drag', ref: button } })).code).toBe('invalid_arguments');
    expect((await failure('browser.act', { action: { kind: 'press', key: 'a\nb' } })).code).toBe('invalid_arguments');
    expect((await failure('browser.screenshot', { ref: 'e9999' })).code).toBe('invalid_arguments');
    await host.call('browser.navigate', { url: pages.url('/other') });
    expect((await failure('browser.act', { action: { kind: 'click', ref: button } })).text).toMatch(/Unknown ref/);
    // Tab ids: unknown, absurd, wrong type.
    for (const tabId of ['t999', '../t1', 'x'.repeat(65)]) {
      expect((await failure('browser.snapshot', { tabId })).code, tabId).toBe('invalid_arguments');
      expect((await failure('browser.close', { tabId })).code, tabId).toBe('invalid_arguments');
    }
    expect((await failure('browser.close', { tabId: 1 })).code).toBe('invalid_arguments');
    expect((await failure('browser.text', { selector: 'p', maxChars: 0 })).code).toBe('invalid_arguments');
    // Still fine afterwards.
    expect((await host.call('browser.text', {})).structured).toMatchObject({ text: 'Other' });
  });
});

describe('browser availability', () => {
  it('is available only with a Chromium that runs: missing, or one whose --version fails, is not (and the gateway gets no cap browser)', async () => {
    using dir = tempDir('capnode-browser-');
    expect(await probeBrowser({ env: { PATH: '/nonexistent' } })).toEqual({ available: false, install: expect.stringMatching(/apt install chromium.*CAPNODE_CHROMIUM/) });
    const broken = join(dir.path, 'chromium');
    writeFileSync(broken, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    expect(await probeBrowser({ env: { PATH: '/nonexistent', CAPNODE_CHROMIUM: broken } })).toEqual({ available: false, install: expect.stringContaining('--version failed') });
    if (chromium) expect(await probeBrowser({ executablePath: chromium })).toEqual({ available: true });
  });
});

describe('browser consent', () => {
  it('is off by default: browser.open is refused with consent_required and starts nothing; status needs no consent', async () => {
    using profile = tempDir('capnode-browser-');
    await using browser = createBrowserCapability({ profileDir: profile.path, headless: true, executablePath: chromium ?? '/nonexistent' });
    await using host = await startTestHost({ host: { capabilities: [browser] } });
    const result = (await host.client.callTool({ name: 'browser.open', arguments: { url: 'http://127.0.0.1:9/' } })) as RawToolResult;
    expect(result.isError).toBe(true);
    expect(result._meta?.['capnode/failure']).toMatchObject({ code: 'consent_required' });
    expect(browser.commands.filter((command) => command.consent !== 'browser').map((command) => command.name)).toEqual(['browser.status']);
    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: false });
  });

  it('asks with the exact action when set to ask', async () => {
    using profile = tempDir('capnode-browser-');
    await using browser = createBrowserCapability({ profileDir: profile.path, headless: true, executablePath: chromium ?? '/nonexistent' });
    await using host = await startTestHost({ settings: { consent: { browser: 'ask' } }, host: { capabilities: [browser] } });
    host.answerWith('deny');
    const result = (await host.client.callTool({ name: 'browser.navigate', arguments: { url: 'https://example.com/private' } })) as RawToolResult;
    expect(result._meta?.['capnode/failure']).toMatchObject({ code: 'denied' });
    expect(host.asked).toHaveLength(1);
    expect(host.asked[0]!.command).toBe('browser.navigate');
    expect(JSON.stringify(host.asked[0])).toContain('https://example.com/private');
    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: false });
  });
});
