import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBrowserCapability, findChromiumExecutable } from '@capnode/capabilities/pack';
import { gatewayNodeDeclaration } from '@capnode/gateway-bridge';
import { describe, expect, it } from 'vitest';
import { startPackHost, type RawToolResult } from '../support/packHost.js';
import { FORM_PAGE, refFor, servePages } from '../support/pages.js';
import { startTestHost, tempDir } from '../support/testHost.js';

const chromium = findChromiumExecutable();

describe.runIf(chromium)('browser.proxy through the host (browser-control service on loopback, real Chromium)', { timeout: 120_000 }, () => {
  it('drives the browser with OpenClaw requests, returns a screenshot as a file envelope, and is declared to a gateway with cap browser', async () => {
    using profile = tempDir('capnode-browser-');
    await using pages = await servePages({ '/form': FORM_PAGE });
    await using browser = createBrowserCapability({ profileDir: profile.path, headless: true });
    await using host = await startPackHost([browser], { settings: { consent: { browser: 'allow' } } });
    const proxy = async (args: Record<string, unknown>) => (await host.client.callTool({ name: 'browser.proxy', arguments: args })) as RawToolResult;

    const declaration = gatewayNodeDeclaration(host.host.registry);
    expect(declaration.commands).toContain('browser.proxy');
    expect(declaration.caps).toContain('browser');

    const opened = await proxy({ method: 'POST', path: '/tabs/open', body: { url: pages.url('/form') } });
    expect(opened.structuredContent).toMatchObject({ result: { targetId: expect.any(String), title: 'Form page', type: 'page' } });
    const targetId = opened.structuredContent!.result.targetId as string;
    const snap = await proxy({ path: '/snapshot', query: { targetId, format: 'ai' } });
    const snapshot = snap.structuredContent!.result.snapshot as string;
    expect((await proxy({ method: 'POST', path: '/act', body: { kind: 'type', ref: refFor(snapshot, 'textbox', 'Name'), text: 'Ada', targetId } })).isError ?? false).toBe(false);
    expect((await proxy({ method: 'POST', path: '/act', body: { kind: 'click', ref: refFor(snapshot, 'button', 'Greet'), targetId } })).isError ?? false).toBe(false);
    expect((await proxy({ path: '/text', query: { selector: '#out' } })).structuredContent).toMatchObject({ result: { text: 'Hello, Ada (red)' } });

    const shot = await proxy({ method: 'POST', path: '/screenshot', body: { targetId }, timeoutMs: 60_000 });
    const { result, files } = shot.structuredContent as { result: { path: string }; files: { path: string; base64: string; mimeType: string }[] };
    expect(files).toEqual([{ path: result.path, base64: expect.any(String), mimeType: 'image/png' }]);
    expect(Buffer.from(files[0]!.base64, 'base64').equals(readFileSync(result.path))).toBe(true);
    expect(result.path.startsWith(join(host.home, 'plugins-data', 'browser', 'media'))).toBe(true);

    const refused = await proxy({ path: `${pages.origin}/tabs` });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['capnode/failure']).toMatchObject({ code: 'invalid_arguments' });
    expect(await proxy({ method: 'DELETE', path: `/tabs/${targetId}` })).toMatchObject({ structuredContent: { result: { ok: true } } });
    expect(existsSync(profile.path)).toBe(true);
  });

  it('meets the browser consent inside the service: off refuses with consent_required, starting nothing', async () => {
    using profile = tempDir('capnode-browser-');
    await using browser = createBrowserCapability({ profileDir: profile.path, headless: true });
    await using host = await startTestHost({ host: { capabilities: [browser] } });
    const result = (await host.client.callTool({ name: 'browser.proxy', arguments: { method: 'POST', path: '/tabs/open', body: { url: 'http://127.0.0.1:9/' } } })) as RawToolResult;
    expect(result.isError).toBe(true);
    expect(result._meta?.['capnode/failure']).toMatchObject({ code: 'consent_required' });
    expect((await host.call('browser.status', {})).structured).toMatchObject({ running: false });
  });
});
