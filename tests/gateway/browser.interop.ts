import { readFileSync, writeFileSync, mkdirSync, existsSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing, findGatewayNode } from '@capnode/gateway-bridge/node';
import { findChromiumExecutable } from '@capnode/capabilities/pack';
import { createHost, type Host } from '@capnode/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectOperator, invokeNode } from './fixtures.js';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { FORM_PAGE, refFor, servePages, type PageServer } from '../support/pages.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';

/** A file input whose change handler writes each file's name and text into #out. */
const UPLOAD_PAGE = `<!doctype html><title>Upload</title><label for="f">File</label><input id="f" type="file"><p id="out">none</p>
<script>document.getElementById('f').addEventListener('change', async (e) => { const f = e.target.files[0]; document.getElementById('out').textContent = f.name + ':' + (await f.text()); });</script>`;

const skipReason = interopSkipReason() ?? (findChromiumExecutable() ? undefined : 'no Chromium (apt install chromium)');
if (skipReason) console.warn(`gateway browser interop skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)("the dedicated browser through the real OpenClaw gateway: browser.proxy and OpenClaw's own browser.request", { timeout: 240_000 }, () => {
  let gateway: RealGateway;
  let host: Host;
  let operator: GatewayClient;
  let nodeId: string;
  let pages: PageServer;
  const dir = tempDir('capnode-browser-interop-');
  const logs: string[] = [];
  const browserRequest = (params: Record<string, unknown>) => operator.request('browser.request', { target: 'node', node: nodeId, timeoutMs: 60_000, ...params }, { timeoutMs: 90_000 }) as Promise<Record<string, any>>;

  beforeAll(async () => {
    pages = await servePages({ '/form': FORM_PAGE, '/upload': UPLOAD_PAGE });
    gateway = await startGateway({ allowCommands: ['browser.proxy', 'browser.proxy.upload.v1'] });
    const home = join(dir.path, 'home');
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(
      join(home, 'settings.json'),
      JSON.stringify({ gateway: { enabled: true, url: gateway.url, token: gateway.token }, consent: { browser: 'allow' }, pluginSettings: { browser: { headless: true } } }),
      { mode: 0o600 },
    );
    host = createHost({ home, port: 0, logFile: false, onLog: (level, message) => logs.push(`${level} ${message}`) });
    await host.start();
    nodeId = await eventually(() => (host.status().node.state === 'connected' ? host.status().node.nodeId : undefined), gatewayWait('the gateway node to connect', 60_000));
    operator = await connectOperator(gateway.url, gateway.token, home);
    await eventually(async () => ((await findGatewayNode(operator, nodeId))?.pendingDeclaredCommands?.includes('browser.proxy') ? true : undefined), gatewayWait('browser.proxy declared'));
    await approveGatewayNodePairing(operator, nodeId);
    await eventually(async () => ((await findGatewayNode(operator, nodeId))?.commands?.includes('browser.proxy.upload.v1') ? true : undefined), gatewayWait('browser.proxy approved'));
  }, 420_000);

  afterAll(async () => {
    if (process.env.BROWSER_INTEROP_DEBUG) console.info(logs.join('\n'));
    await operator?.close();
    await host?.close();
    await gateway?.[Symbol.asyncDispose]();
    await pages?.[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  });

  it('declares browser.proxy with cap browser', async () => {
    const listed = (await operator.request('node.list', {})) as { nodes: { nodeId: string; caps?: string[] }[] };
    expect(listed.nodes.find((node) => node.nodeId === nodeId)?.caps).toContain('browser');
  });

  it('node.invoke browser.proxy drives the browser and refuses a URL as path', async () => {
    const opened = await invokeNode(operator, nodeId, 'browser.proxy', { method: 'POST', path: '/tabs/open', body: { url: pages.url('/form') } }, { timeoutMs: 60_000 });
    expect(opened, JSON.stringify(opened).slice(0, 500)).toMatchObject({ ok: true, payload: { payload: { result: { title: 'Form page', type: 'page' } } } });
    const refused = await invokeNode(operator, nodeId, 'browser.proxy', { method: 'GET', path: `${pages.origin}/tabs` });
    expect(refused.ok).toBe(false);
    expect(JSON.stringify(refused)).toContain('not a URL');
  });

  it("OpenClaw's browser.request reaches capnode: snapshot, act by ref, text, and a screenshot rewritten into the gateway's media store", async () => {
    const opened = await browserRequest({ method: 'POST', path: '/tabs/open', body: { url: pages.url('/form') } });
    const targetId = opened.targetId as string;
    expect(opened).toMatchObject({ title: 'Form page', url: pages.url('/form') });
    const snap = await browserRequest({ method: 'GET', path: '/snapshot', query: { targetId, format: 'ai' } });
    const snapshot = snap.snapshot as string;
    await browserRequest({ method: 'POST', path: '/act', body: { kind: 'type', ref: refFor(snapshot, 'textbox', 'Name'), text: 'Gateway', targetId } });
    await browserRequest({ method: 'POST', path: '/act', body: { kind: 'click', ref: refFor(snapshot, 'button', 'Greet'), targetId } });
    expect(await browserRequest({ method: 'GET', path: '/text', query: { targetId, selector: '#out' } })).toMatchObject({ ok: true, text: 'Hello, Gateway (red)' });

    const shot = await browserRequest({ method: 'POST', path: '/screenshot', body: { targetId } });
    const saved = shot.path as string;
    // The gateway saved the node's file in its own media store and rewrote the path to it.
    expect(saved.startsWith(gateway.stateDir), saved).toBe(true);
    expect(existsSync(saved)).toBe(true);
    const bytes = readFileSync(saved);
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    expect(saved.startsWith(host.paths.home)).toBe(false);

    // A route failure arrives as the gateway's INVALID_REQUEST with the service's message.
    await expect(browserRequest({ method: 'POST', path: '/act', body: { kind: 'click', ref: 'e9999', targetId } })).rejects.toThrow(/Unknown ref/);
  });

  it("OpenClaw's browser.request uploads a file from the gateway's upload directory: the gateway reads it and sends it as browser.proxy.upload.v1", async () => {
    // OpenClaw reads upload paths from its own uploads directory only (/tmp/openclaw/uploads by default).
    const uploads = '/tmp/openclaw/uploads';
    mkdirSync(uploads, { recursive: true });
    const file = join(uploads, `capnode-interop-${process.pid}-${Date.now()}.txt`);
    writeFileSync(file, 'from the gateway');
    try {
      const opened = await browserRequest({ method: 'POST', path: '/tabs/open', body: { url: pages.url('/upload') } });
      const targetId = opened.targetId as string;
      expect(await browserRequest({ method: 'POST', path: '/hooks/file-chooser', body: { paths: [file], element: '#f', targetId } })).toMatchObject({ ok: true });
      expect(await browserRequest({ method: 'GET', path: '/text', query: { targetId, selector: '#out' } })).toMatchObject({ text: `${basename(file)}:from the gateway` });
      const aria = await browserRequest({ method: 'GET', path: '/snapshot', query: { targetId, format: 'aria' } });
      expect(aria).toMatchObject({ ok: true, format: 'aria', targetId });
      expect(aria.nodes).toContainEqual(expect.objectContaining({ role: 'paragraph' }));
    } finally {
      rmSync(file, { force: true });
    }
  });
});
