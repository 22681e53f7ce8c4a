import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing, findGatewayNode } from '@capnode/gateway-bridge/node';
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
    gateway = await startGateway({ allowCommands: CANVAS_ALLOW });
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

  it("resolves a hosted /__openclaw__/ path against the gateway's pluginSurfaceUrls.canvas when the gateway offers one", async () => {
    const surface = host.status().node.state === 'connected' ? await hostedSurface() : undefined;
    const result = await invoke('canvas.navigate', { url: '/__openclaw__/canvas/' });
    console.info(`gateway canvas interop: the gateway ${surface ? 'offered' : 'did not offer'} pluginSurfaceUrls.canvas; navigate answered ${JSON.stringify(result).slice(0, 300)}`);
    if (surface === undefined) {
      expect(JSON.stringify(result)).toContain('CANVAS_HOST_NOT_CONFIGURED');
      return;
    }
    expect(result, JSON.stringify(result).slice(0, 500)).toMatchObject({ ok: true, payload: { payload: { navigated: true, url: expect.stringContaining('/__openclaw__/canvas/') } } });
    await invoke('canvas.hide', {});
  });

  /** What the gateway handed this node as its canvas surface (read through the caps answer). */
  async function hostedSurface(): Promise<boolean | undefined> {
    const caps = await invoke('canvas.caps', {});
    return (caps as { payload?: { payload?: { hostedPaths?: boolean } } }).payload?.payload?.hostedPaths ? true : undefined;
  }
});
