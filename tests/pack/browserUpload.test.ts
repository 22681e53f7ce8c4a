import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBrowserCapability, findChromiumExecutable } from '@capnode/capabilities/pack';
import { describe, expect, it } from 'vitest';
import { startPackHost, type RawToolResult } from '../support/packHost.js';
import { refFor, servePages } from '../support/pages.js';
import { tempDir } from '../support/testHost.js';

const chromium = findChromiumExecutable();
const MiB = 1024 * 1024;

/**
 * A page whose file input records each file's name and text in #out; a button opens the input's chooser.
 * It reads the files after `change` asynchronously, so tests poll #out for a result rather than read it once.
 */
const UPLOAD_PAGE = `<!doctype html>
<html><head><title>Upload page</title></head><body>
<h1>Send a file</h1>
<label for="f">Attachment</label><input id="f" type="file" multiple style="display:none">
<button id="pick" onclick="document.getElementById('f').click()">Choose files</button>
<p id="out">none</p>
<script>
document.getElementById('f').addEventListener('change', async (event) => {
  const parts = [];
  for (const file of event.target.files) parts.push(file.name + ':' + (file.size > 100 ? file.size : await file.text()));
  document.getElementById('out').textContent = parts.join('|');
});
</script>
</body></html>`;

describe.runIf(chromium)('browser.upload and the aria snapshot (real Chromium)', { timeout: 120_000 }, () => {
  it('uploads files from the files roots by selector, through a chooser a ref opens, and through an armed chooser; refuses bad inputs, sending nothing', async () => {
    using work = tempDir('capnode-upload-');
    const root = join(work.path, 'root');
    const outside = join(work.path, 'outside');
    const config = join(root, '.capnode');
    for (const dir of [root, outside, config]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(root, 'a.txt'), 'alpha');
    writeFileSync(join(root, 'b.txt'), 'beta');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    writeFileSync(join(config, 'mcp-token'), 'token');
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leaves.txt'));
    symlinkSync(join(root, 'a.txt'), join(root, 'stays.txt'));
    writeFileSync(join(root, 'big.bin'), Buffer.alloc(10 * MiB + 1));
    writeFileSync(join(root, 'nine1.bin'), Buffer.alloc(9 * MiB));
    writeFileSync(join(root, 'nine2.bin'), Buffer.alloc(9 * MiB));
    await using pages = await servePages({ '/upload': UPLOAD_PAGE });
    await using browser = createBrowserCapability({ profileDir: join(work.path, 'profile'), headless: true, actionTimeoutMs: 10_000, files: () => ({ roots: [root], configDir: config }) });
    await using host = await startPackHost([browser], { settings: { consent: { browser: 'allow', files: 'allow' } } });
    const call = async (name: string, args: Record<string, unknown>) => (await host.client.callTool({ name, arguments: args })) as RawToolResult;
    const out = async () => (await call('browser.text', { selector: '#out' })).structuredContent!.text as string;

    const tabId = (await call('browser.open', { url: pages.url('/upload') })).structuredContent!.tabId as string;
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ selector: '#f', paths: [join(outside, 'secret.txt')] }, 'denied', /outside the files roots/],
      [{ selector: '#f', paths: [join(root, 'leaves.txt')] }, 'denied', /outside the files roots/],
      [{ selector: '#f', paths: [join(root, 'a.txt'), join(root, '..', 'outside', 'secret.txt')] }, 'denied', /outside the files roots/],
      [{ selector: '#f', paths: [join(config, 'mcp-token')] }, 'denied', /config directory/],
      [{ selector: '#f', paths: [join(root, 'missing.txt')] }, 'invalid_arguments', /Nothing exists/],
      [{ selector: '#f', paths: [root] }, 'invalid_arguments', /not a regular file/],
      [{ selector: '#f', paths: [`file://${join(root, 'a.txt')}`] }, 'invalid_arguments', /not URLs/],
      [{ selector: '#f', paths: ['https://example.com/a.txt'] }, 'invalid_arguments', /not URLs/],
      [{ selector: '#f', paths: [join(root, 'big.bin')] }, 'payload_too_large', /10 MiB/],
      [{ selector: '#f', paths: [join(root, 'nine1.bin'), join(root, 'nine2.bin')] }, 'payload_too_large', /16 MiB/],
      [{ selector: '#f', files: [{ name: 'x.txt', base64: 'not base64!' }] }, 'invalid_arguments', /canonical base64/],
    ];
    for (const [args, code, reason] of refusals) {
      const refused = await call('browser.upload', { tabId, ...args });
      expect(refused.isError, JSON.stringify(args)).toBe(true);
      expect(refused._meta?.['capnode/failure'], JSON.stringify(args)).toMatchObject({ code });
      expect(refused.content?.[0]?.text).toMatch(reason);
    }
    // Schema refusals: both paths and files, ref with a selector.
    for (const args of [{ selector: '#f', paths: [join(root, 'a.txt')], files: [{ name: 'a', base64: '' }] }, { ref: 'e1', selector: '#f', paths: [join(root, 'a.txt')] }, { selector: '#f' }]) {
      const refused = await call('browser.upload', { tabId, ...args });
      expect(refused._meta?.['capnode/failure']).toMatchObject({ code: 'invalid_arguments' });
    }
    expect(await out()).toBe('none');

    // By selector, paths from the root (a symlink that stays inside is followed).
    expect(await call('browser.upload', { tabId, selector: '#f', paths: [join(root, 'a.txt'), join(root, 'stays.txt')] })).toMatchObject({ structuredContent: { ok: true, mode: 'input', files: [{ name: 'a.txt', bytes: 5 }, { name: 'a.txt', bytes: 5 }] } });
    await expect.poll(out, { timeout: 10_000 }).toBe('a.txt:alpha|a.txt:alpha');

    // Through the chooser the button's click opens, inline bytes.
    const snapshot = (await call('browser.snapshot', { tabId })).structuredContent!.snapshot as string;
    const pick = refFor(snapshot, 'button', 'Choose files');
    expect(await call('browser.upload', { tabId, ref: pick, files: [{ name: '../evil/c.txt', base64: Buffer.from('gamma').toString('base64') }] })).toMatchObject({ structuredContent: { mode: 'chooser' } });
    await expect.poll(out, { timeout: 10_000 }).toBe('c.txt:gamma');

    // Armed: the next chooser (opened by browser.act) gets the files.
    expect(await call('browser.upload', { tabId, paths: [join(root, 'b.txt')] })).toMatchObject({ structuredContent: { mode: 'armed' } });
    expect((await call('browser.act', { tabId, action: { kind: 'click', ref: pick } })).isError ?? false).toBe(false);
    await expect.poll(out, { timeout: 10_000 }).toBe('b.txt:beta');

    // An unknown ref is refused.
    expect((await call('browser.upload', { tabId, ref: 'e999', paths: [join(root, 'a.txt')] }))).toMatchObject({ isError: true, _meta: { 'capnode/failure': { code: 'invalid_arguments' } }, content: [{ text: expect.stringMatching(/Unknown ref/) }] });

    // The aria snapshot: OpenClaw's nodes (ref axN, role, name, depth).
    const aria = await call('browser.snapshot', { tabId, format: 'aria' });
    expect(aria.structuredContent).toMatchObject({ ok: true, format: 'aria', tabId, url: pages.url('/upload'), truncated: false });
    const nodes = aria.structuredContent!.nodes as { ref: string; role: string; name: string; depth: number }[];
    expect(nodes[0]).toMatchObject({ ref: 'ax1', role: 'RootWebArea', name: 'Upload page', depth: 0 });
    expect(nodes).toContainEqual(expect.objectContaining({ role: 'button', name: 'Choose files', ref: expect.stringMatching(/^ax\d+$/), depth: expect.any(Number) }));
    expect(nodes).toContainEqual(expect.objectContaining({ role: 'heading', name: 'Send a file' }));
    expect(aria.content?.[0]?.text).toContain('- button "Choose files"');
    const cut = await call('browser.snapshot', { tabId, format: 'aria', limit: 2 });
    expect(cut.structuredContent).toMatchObject({ truncated: true, nodes: [{ ref: 'ax1' }, { ref: 'ax2' }] });
  });

  it('serves the file-chooser hook and aria snapshots through browser.proxy, with a gateway upload envelope; bad envelopes send nothing', async () => {
    using work = tempDir('capnode-upload-');
    const root = join(work.path, 'root');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'local.txt'), 'local');
    await using pages = await servePages({ '/upload': UPLOAD_PAGE });
    await using browser = createBrowserCapability({ profileDir: join(work.path, 'profile'), headless: true, actionTimeoutMs: 10_000, files: () => ({ roots: [root] }) });
    await using host = await startPackHost([browser], { settings: { consent: { browser: 'allow', files: 'allow' } } });
    const proxy = async (args: Record<string, unknown>) => (await host.client.callTool({ name: 'browser.proxy', arguments: args })) as RawToolResult;
    const out = async () => (await proxy({ path: '/text', query: { selector: '#out' } })).structuredContent!.result.text as string;

    const targetId = (await proxy({ method: 'POST', path: '/tabs/open', body: { url: pages.url('/upload') } })).structuredContent!.result.targetId as string;
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const bad: [Record<string, unknown>, string][] = [
      [{ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId }, upload: { envelope: 'other', files: [{ name: 'a.txt', contentBase64: b64('a') }] } }, 'invalid_arguments'],
      [{ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId }, upload: { envelope: 'browser-upload-v1', files: [] } }, 'invalid_arguments'],
      [{ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId }, upload: { envelope: 'browser-upload-v1', files: [{ name: 'a.txt', contentBase64: 'YQ' }] } }, 'invalid_arguments'],
      [{ method: 'POST', path: '/act', body: { kind: 'click', ref: 'e1' }, upload: { envelope: 'browser-upload-v1', files: [{ name: 'a.txt', contentBase64: b64('a') }] } }, 'invalid_arguments'],
      [{ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId, paths: ['https://example.com/a.txt'] } }, 'invalid_arguments'],
      [{ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId, paths: ['/etc/hostname'] } }, 'denied'],
    ];
    for (const [args, code] of bad) {
      const refused = await proxy(args);
      expect(refused.isError, JSON.stringify(args).slice(0, 200)).toBe(true);
      expect(refused._meta?.['capnode/failure']).toMatchObject({ code });
    }
    // (The size limits of an envelope are unit tests of browser.proxy: MCP over HTTP caps a request at 4 MiB.)
    // With OpenClaw's error envelope the route failure is a payload.
    expect((await proxy({ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId }, errorEnvelope: 'browser-v1' })).structuredContent).toMatchObject({ error: { status: 400, body: { error: 'paths are required' } } });
    expect(await out()).toBe('none');

    const sent = await proxy({ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId, paths: ['/gateway/media/g.txt'] }, upload: { envelope: 'browser-upload-v1', files: [{ name: 'g.txt', contentBase64: b64('from the gateway') }] } });
    expect(sent).toMatchObject({ structuredContent: { result: { ok: true } } });
    await expect.poll(out, { timeout: 10_000 }).toBe('g.txt:from the gateway');
    expect((await proxy({ method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId, paths: [join(root, 'local.txt')] } })).structuredContent).toMatchObject({ result: { ok: true } });
    await expect.poll(out, { timeout: 10_000 }).toBe('local.txt:local');

    const aria = await proxy({ path: '/snapshot', query: { targetId, format: 'aria', limit: 50 } });
    expect(aria.structuredContent!.result).toMatchObject({ ok: true, format: 'aria', targetId, url: pages.url('/upload') });
    expect(aria.structuredContent!.result.nodes).toContainEqual(expect.objectContaining({ role: 'button', name: 'Choose files' }));
    expect(aria.structuredContent!.result).not.toHaveProperty('snapshot');
  });

  it('an upload by paths reads files off this machine, so it needs the files consent too; inline files do not', async () => {
    using work = tempDir('capnode-upload-');
    writeFileSync(join(work.path, 'a.txt'), 'alpha');
    await using pages = await servePages({ '/upload': UPLOAD_PAGE });
    await using browser = createBrowserCapability({ profileDir: join(work.path, 'profile'), headless: true, actionTimeoutMs: 10_000, files: () => ({ roots: [work.path] }) });
    await using host = await startPackHost([browser], { settings: { consent: { browser: 'allow' } } });
    const call = async (name: string, args: Record<string, unknown>) => (await host.client.callTool({ name, arguments: args })) as RawToolResult;
    const out = async () => (await call('browser.text', { selector: '#out' })).structuredContent!.text as string;
    const tabId = (await call('browser.open', { url: pages.url('/upload') })).structuredContent!.tabId as string;

    const refused = await call('browser.upload', { tabId, selector: '#f', paths: [join(work.path, 'a.txt')] });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['capnode/failure']).toMatchObject({ code: 'consent_required' });
    expect(refused.content?.[0]?.text).toMatch(/files access is off/);
    const proxied = await call('browser.proxy', { method: 'POST', path: '/hooks/file-chooser', body: { element: '#f', targetId: tabId, paths: [join(work.path, 'a.txt')] } });
    expect(proxied.isError).toBe(true);
    expect(proxied.content?.[0]?.text).toMatch(/files access is off/);
    expect(await out()).toBe('none');

    const inline = await call('browser.upload', { tabId, selector: '#f', files: [{ name: 'b.txt', base64: Buffer.from('beta').toString('base64') }] });
    expect(inline.isError ?? false).toBe(false);
    await expect.poll(out, { timeout: 10_000 }).toBe('b.txt:beta');
  });
});
