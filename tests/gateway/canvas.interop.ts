import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import type { GatewayClient } from '@capnode/gateway-bridge';
import { GATEWAY_NODE_IDENTITY_FILE, approveGatewayNodePairing, createGatewayNode, findGatewayNode } from '@capnode/gateway-bridge/node';
import { probeCanvas } from '@capnode/capabilities/pack';
import { createHost, type Host } from '@capnode/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectOperator, invokeNode } from './fixtures.js';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';
import { hasXvfb, startXvfb, type Xvfb } from '../support/xvfb.js';
import { decodeToRgb } from '../pack/screenSupport.js';

const chromium = probeCanvas({ env: { ...process.env, DISPLAY: ':0' } });
const skipReason = interopSkipReason() ?? (hasXvfb() ? undefined : 'Xvfb missing') ?? (chromium.available ? undefined : `canvas backend missing: ${chromium.install}`);
if (skipReason) console.warn(`gateway canvas interop skipped: ${skipReason}`);

/**
 * The gateway's canvas host: on unless `plugins.entries.canvas.config.host.enabled` is false (or
 * OPENCLAW_SKIP_CANVAS_HOST is set); set explicitly here. It serves the documents under
 * `<state>/canvas/documents/<id>/` at `/__openclaw__/canvas/documents/<id>/…` to nodes holding the
 * `canvas` surface's capability, which it issues in `hello-ok.pluginSurfaceUrls.canvas`.
 */
const CANVAS_HOST_CONFIG = { plugins: { entries: { canvas: { config: { host: { enabled: true } } } } } };
const DOCUMENT_ID = 'capnode-interop';
const HOSTED_PATH = `/__openclaw__/canvas/documents/${DOCUMENT_ID}/index.html`;

/** Writes a canvas document where the gateway's canvas host serves it from (as its canvas tool does). */
function writeHostedDocument(stateDir: string): void {
  const dir = join(stateDir, 'canvas', 'documents', DOCUMENT_ID);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<title>hosted</title><body style="margin:0;background:#00ff00"><script>window.hosted = "from-the-gateway"</script></body>');
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ id: DOCUMENT_ID, kind: 'html_bundle', createdAt: new Date().toISOString(), entryUrl: HOSTED_PATH, localEntrypoint: 'index.html', assets: [] }));
}

/** linux has no canvas defaults in OpenClaw: this gateway's config allows the canvas commands the node declares. */
const CANVAS_ALLOW = ['canvas.present', 'canvas.hide', 'canvas.navigate', 'canvas.eval', 'canvas.snapshot', 'canvas.caps', 'canvas.a2ui.push', 'canvas.a2ui.reset'];

function nodeErrorCode(result: Awaited<ReturnType<typeof invokeNode>>): string | undefined {
  return result.ok ? undefined : (result.details as { nodeError?: { code?: string } } | undefined)?.nodeError?.code ?? (result.details as { code?: string } | undefined)?.code;
}

describe.skipIf(skipReason !== undefined)('canvas.* forwarded by the real OpenClaw gateway to a capnode gateway node', () => {
  let gateway: RealGateway;
  let display: Xvfb;
  let host: Host;
  let operator: GatewayClient;
  let nodeId: string;
  let page: Server;
  let pageOrigin: string;
  const requested: string[] = [];
  const dir = tempDir('capnode-canvas-interop-');
  const savedDisplay = process.env.DISPLAY;
  const invoke = (command: string, params: unknown, timeoutMs = 60_000) => invokeNode(operator, nodeId, command, params, { timeoutMs });

  beforeAll(async () => {
    display = await startXvfb({ width: 1024, height: 768 });
    process.env.DISPLAY = display.display;
    page = createServer((request, response) => {
      requested.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<title>local</title><body style="margin:0;background:#0000ff">local page</body>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    gateway = await startGateway({ allowCommands: CANVAS_ALLOW, config: CANVAS_HOST_CONFIG });
    writeHostedDocument(gateway.stateDir);
    const home = join(dir.path, 'home');
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ approvals: { wait: 'block' }, gateway: { enabled: true, url: gateway.url, token: gateway.token } }), { mode: 0o600 });
    host = createHost({ home, port: 0, logFile: false, onLog: () => undefined });
    await host.start();
    nodeId = await eventually(() => (host.status().node.state === 'connected' ? host.status().node.nodeId : undefined), gatewayWait('the gateway node to connect', 60_000));
    operator = await connectOperator(gateway.url, gateway.token, home);
    await eventually(async () => ((await findGatewayNode(operator, nodeId))?.pendingDeclaredCommands?.length ? true : undefined), gatewayWait('the node with its declared commands'));
    await approveGatewayNodePairing(operator, nodeId);
    await eventually(() => host.status().node.pairing?.state === 'approved', gatewayWait('the node to see the approval'));
    // Approved mid-connection, the node reconnects once so the gateway issues its canvas surface URL.
    await eventually(async () => (host.status().node.state === 'connected' ? await hostedSurface() : undefined), gatewayWait('the canvas surface URL after the approval', 60_000));
    // The gateway may take two 90 s start attempts on a loaded machine.
  }, 420_000);

  afterAll(async () => {
    await operator?.close();
    await host?.close();
    await gateway?.[Symbol.asyncDispose]();
    page?.closeAllConnections();
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
    await display?.close();
    if (savedDisplay === undefined) delete process.env.DISPLAY;
    else process.env.DISPLAY = savedDisplay;
    dir[Symbol.dispose]();
  });

  it('declares the canvas commands and the canvas cap; the gateway keeps them after approval', async () => {
    const entry = await findGatewayNode(operator, nodeId);
    expect(entry?.commands).toEqual(expect.arrayContaining(['canvas.present', 'canvas.hide', 'canvas.navigate', 'canvas.eval', 'canvas.snapshot']));
    expect((entry as { caps?: string[] } | undefined)?.caps).toContain('canvas');
  });

  it('presents HTML through the gateway, evaluates in it, snapshots a PNG of it, and hides it', async () => {
    const presented = await invoke('canvas.present', { html: '<title>gw</title><body style="margin:0;background:#ff0000"><script>window.n = 7 * 6</script></body>', placement: { x: 0, y: 0, width: 640, height: 480 } });
    expect(presented, JSON.stringify(presented).slice(0, 500)).toMatchObject({ ok: true, payload: { payload: { ok: true, presented: true } } });
    const evaluated = await invoke('canvas.eval', { javaScript: 'String(window.n) + document.title' });
    expect(evaluated).toMatchObject({ ok: true, payload: { payload: { result: '42gw' } } });
    // OpenClaw's agent tool sends { format, maxWidth, quality } and reads { format, base64 }.
    const shot = await invoke('canvas.snapshot', { format: 'png' });
    expect(shot).toMatchObject({ ok: true, payload: { payload: { format: 'png', base64: expect.any(String) } } });
    const { base64, width, height } = (shot as { payload: { payload: { base64: string; width: number; height: number } } }).payload.payload;
    const rgb = decodeToRgb(Buffer.from(base64, 'base64'), width, height);
    const middle = ((height >> 1) * width + (width >> 1)) * 3;
    expect([...rgb.subarray(middle, middle + 3)]).toEqual([255, 0, 0]);
    expect(await invoke('canvas.hide', {})).toMatchObject({ ok: true, payload: { payload: { ok: true, hidden: true } } });
  });

  it('refuses this machine in every spelling to the gateway caller, with the code in the node error, and loads nothing', async () => {
    const port = new URL(pageOrigin).port;
    for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '127.1', '[::ffff:127.0.0.1]', 'localhost.']) {
      const result = await invoke('canvas.navigate', { url: `http://${host}:${port}/secret` });
      expect(result.ok, host).toBe(false);
      expect(JSON.stringify(result), host).toContain('CANVAS_URL_REFUSED');
    }
    expect(requested).not.toContain('/secret');
    const a2ui = await invoke('canvas.a2ui.reset', {});
    expect(a2ui.ok).toBe(false);
    expect(JSON.stringify(a2ui)).toContain('A2UI_UNSUPPORTED');
    expect(nodeErrorCode(a2ui)).toBeDefined();
  });

  it("presents and navigates to a hosted /__openclaw__/canvas/ path from the gateway: the gateway's own page loads through its capability URL", async () => {
    const presented = await invoke('canvas.present', { url: HOSTED_PATH, placement: { x: 0, y: 0, width: 640, height: 480 } });
    expect(presented, JSON.stringify(presented).slice(0, 500)).toMatchObject({ ok: true, payload: { payload: { ok: true, presented: true } } });
    const url = (presented as { payload: { payload: { url: string } } }).payload.payload.url;
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${gateway.port}/__openclaw__/cap/[A-Za-z0-9_-]+${HOSTED_PATH.replaceAll('/', '\\/').replaceAll('.', '\\.')}$`));
    expect(await invoke('canvas.eval', { javaScript: 'window.hosted + "|" + document.title' })).toMatchObject({ ok: true, payload: { payload: { result: 'from-the-gateway|hosted' } } });
    // Somewhere else first, then back by navigate.
    await invoke('canvas.present', { html: '<title>elsewhere</title>' });
    const navigated = await invoke('canvas.navigate', { url: HOSTED_PATH });
    expect(navigated, JSON.stringify(navigated).slice(0, 500)).toMatchObject({ ok: true, payload: { payload: { navigated: true, url } } });
    expect(await invoke('canvas.eval', { javaScript: 'window.hosted' })).toMatchObject({ ok: true, payload: { payload: { result: 'from-the-gateway' } } });
    const shot = await invoke('canvas.snapshot', { format: 'png' });
    const { base64, width, height } = (shot as { payload: { payload: { base64: string; width: number; height: number } } }).payload.payload;
    const rgb = decodeToRgb(Buffer.from(base64, 'base64'), width, height);
    const middle = ((height >> 1) * width + (width >> 1)) * 3;
    expect([...rgb.subarray(middle, middle + 3)]).toEqual([0, 255, 0]);
    // The gateway's origin is open for its hosted surface, this machine's other ports still are not.
    const port = new URL(pageOrigin).port;
    expect(JSON.stringify(await invoke('canvas.navigate', { url: `http://127.0.0.1:${port}/secret` }))).toContain('CANVAS_URL_REFUSED');
    expect(requested).not.toContain('/secret');
    await invoke('canvas.hide', {});
  });

  it('renews the canvas capability with node.pluginSurface.refresh: the new URL serves the page, the replaced one no longer does', async () => {
    const registry = createRegistry([defineCapability({ category: 'canvas', commands: [defineCommand({ name: 'canvas.present', description: 'stand-in', execute: () => 'ok' })] })]);
    const home = join(dir.path, 'second-node');
    mkdirSync(home, { mode: 0o700 });
    await using second = createGatewayNode({ url: gateway.url, token: gateway.token, invoker: createInvoker({ registry }), identityPath: join(home, GATEWAY_NODE_IDENTITY_FILE) });
    await second.ready({ timeoutMs: 60_000 });
    // Before approval the gateway issues no URL (the connect's approved caps lack canvas), and refreshes none.
    expect(second.pluginSurfaceUrl('canvas')).toBeUndefined();
    await eventually(async () => ((await findGatewayNode(operator, second.nodeId))?.pendingDeclaredCommands?.length ? true : undefined), gatewayWait('the second node pending'));
    await approveGatewayNodePairing(operator, second.nodeId);
    const issued = await eventually(() => second.pluginSurfaceUrl('canvas'), gatewayWait('the second node canvas URL', 60_000));
    expect(issued).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${gateway.port}/__openclaw__/cap/[A-Za-z0-9_-]+$`));
    expect((await fetch(`${issued}${HOSTED_PATH}`)).status).toBe(200);
    // Without the capability the gateway answers 401 (what the canvas renews on).
    expect((await fetch(`http://127.0.0.1:${gateway.port}${HOSTED_PATH}`)).status).toBe(401);
    const renewed = await second.freshPluginSurfaceUrl('canvas', { force: true });
    expect(renewed).toMatch(/\/__openclaw__\/cap\/[A-Za-z0-9_-]+$/);
    expect(renewed).not.toBe(issued);
    expect(second.pluginSurfaceUrl('canvas')).toBe(renewed);
    const page = await fetch(`${renewed}${HOSTED_PATH}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('from-the-gateway');
    expect((await fetch(`${issued}${HOSTED_PATH}`)).status).toBe(401);
  });

  /** What the gateway handed this node as its canvas surface (read through the caps answer). */
  async function hostedSurface(): Promise<boolean | undefined> {
    const caps = await invoke('canvas.caps', {});
    return (caps as { payload?: { payload?: { hostedPaths?: boolean } } }).payload?.payload?.hostedPaths ? true : undefined;
  }
});
