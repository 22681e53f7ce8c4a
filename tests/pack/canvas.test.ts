import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInvoker, createRegistry, type CommandResult, type Transport } from '@capnode/capabilities';
import { createHost } from '@capnode/host';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startFakeGateway } from '../../packages/gateway-bridge/src/internal/fakeGateway.js';
import { createCanvasCapability, MAX_CANVAS_HTML_BYTES, probeCanvas } from '@capnode/capabilities/pack';
import { failureOf } from '../support/invocation.js';
import { eventually } from '../support/poll.js';
import { startTestHost, tempDir } from '../support/testHost.js';
import { hasXvfb, startXvfb, type Xvfb } from '../support/xvfb.js';
import { callRaw, decodeToRgb, failureCode, processesMatching } from './screenSupport.js';

/** The built CLI (`pnpm build`), for the stdio test. */
const cliPath = fileURLToPath(new URL('../../apps/cli/dist/bin.js', import.meta.url));

const ready = hasXvfb() && probeCanvas({ env: { ...process.env, DISPLAY: ':0' } }).available;

/** A loopback web server that records every request path. */
interface PageServer extends AsyncDisposable {
  readonly port: number;
  readonly origin: string;
  readonly paths: string[];
}

async function startPageServer(host = '127.0.0.1', routes: Record<string, (port: number) => { status?: number; headers?: Record<string, string>; body: string }> = {}): Promise<PageServer> {
  const paths: string[] = [];
  let port = 0;
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '');
    const route = routes[request.url ?? ''];
    const answer = route ? route(port) : { body: `<title>page</title><body style="margin:0;background:#00ff00"><p id="p">${request.url}</p><script>window.answer = 6 * 7</script></body>` };
    response.writeHead(answer.status ?? 200, { 'content-type': 'text/html', ...answer.headers });
    response.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://${host}:${port}`,
    paths,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The browser keeps its connections alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/** Every spelling of this machine and its network a remote caller may not open. */
const REFUSED = [
  'http://2130706433/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://0177.0.0.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::1]/',
  'http://localhost./',
  'http://LOCALHOST/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://10.0.0.1/',
  'http://192.168.0.1/',
  'http://169.254.169.254/',
  'http://router/',
];

// Chromium takes seconds to start on a loaded machine: each test may start it more than once.
describe.skipIf(!ready)('canvas on a real Xvfb display with real Chromium', { timeout: 180_000 }, () => {
  let xvfb: Xvfb;
  let pages: PageServer;
  const dir = tempDir('capnode-canvas-');
  const profileDir = join(dir.path, 'profile');
  let surface: string | undefined;
  // Each test's canvas closes with the test, passed or failed: a browser left on the shared profile
  // would take over the next test's launch (Chromium hands a second start on one profile to the first).
  let perTest = new AbortController();
  const capability = () => createCanvasCapability({ env: xvfb.env, profileDir, gatewayCanvasUrl: () => surface, signal: perTest.signal });

  beforeAll(async () => {
    xvfb = await startXvfb({ width: 1280, height: 800 });
    pages = await startPageServer();
  });
  beforeEach(() => {
    perTest = new AbortController();
  });
  afterEach(async () => {
    perTest.abort();
    await eventually(() => processesMatching(profileDir).length === 0, { what: "the test's canvas browser to exit", timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await pages?.[Symbol.asyncDispose]();
    await xvfb?.close();
    dir[Symbol.dispose]();
  });

  /** One registry and invoker on one canvas capability: calls as any transport. */
  function direct() {
    const registry = createRegistry();
    registry.register(capability());
    const invoker = createInvoker({ registry });
    return (command: string, args: Record<string, unknown>, transport: Transport = 'gateway'): Promise<CommandResult> => invoker.invoke({ command, args, transport }).then((outcome) => outcome.result);
  }

  it('presents HTML, evaluates in it, snapshots a PNG, navigates, hides, and closes the browser (MCP HTTP)', async () => {
    await using host = await startTestHost({ host: { capabilities: [capability()], builtinPlugins: false } });
    const html = '<title>canvas test</title><body style="margin:0;background:#ff0000"><h1 id="h">hello</h1><script>window.value = { n: 41 + 1 }</script></body>';
    const presented = await callRaw(host, 'canvas.present', { html, placement: { x: 10, y: 20, width: 640, height: 480 } });
    expect(presented.isError, JSON.stringify(presented.content)).not.toBe(true);
    expect(presented.structuredContent).toMatchObject({ ok: true, presented: true });
    expect(processesMatching(profileDir).length).toBeGreaterThan(0);

    const evaluated = await callRaw(host, 'canvas.eval', { javaScript: 'document.getElementById("h").textContent + ":" + window.value.n' });
    expect(evaluated.structuredContent).toEqual({ result: 'hello:42' });
    expect((await callRaw(host, 'canvas.eval', { script: 'Promise.resolve({ a: [1, 2] })' })).structuredContent).toEqual({ result: '{"a":[1,2]}' });
    const thrown = await callRaw(host, 'canvas.eval', { javaScript: 'throw new Error("boom")' });
    expect(failureCode(thrown)).toBe('failed');
    expect(thrown.content[0]!.text).toContain('boom');

    const shot = await callRaw(host, 'canvas.snapshot', {});
    const png = Buffer.from(shot.structuredContent!.base64 as string, 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    const { width, height } = shot.structuredContent as { width: number; height: number };
    expect(width).toBeGreaterThan(300);
    const rgb = decodeToRgb(png, width, height);
    expect([...rgb.subarray(((height >> 1) * width + (width >> 1)) * 3, ((height >> 1) * width + (width >> 1)) * 3 + 3)]).toEqual([255, 0, 0]);
    const small = await callRaw(host, 'canvas.snapshot', { format: 'jpeg', maxWidth: 200, quality: 0.5 });
    expect(small.structuredContent).toMatchObject({ format: 'jpeg', width: 200 });
    expect(small.content.find((part) => part.type === 'image')!.mimeType).toBe('image/jpeg');

    const navigated = await callRaw(host, 'canvas.navigate', { url: `${pages.origin}/second` });
    expect(navigated.structuredContent).toMatchObject({ ok: true, navigated: true, url: `${pages.origin}/second` });
    expect((await callRaw(host, 'canvas.eval', { javaScript: 'location.pathname + " " + window.answer' })).structuredContent).toEqual({ result: '/second 42' });

    expect((await callRaw(host, 'canvas.caps', {})).structuredContent).toMatchObject({ renderer: 'chromium', eval: true, snapshot: true, visible: true, a2ui: { supported: false } });
    expect((await callRaw(host, 'canvas.hide', {})).structuredContent).toEqual({ ok: true, hidden: true });
    await eventually(() => processesMatching(profileDir).length === 0, { what: 'the browser to exit on hide', timeoutMs: 10_000 });
    const closed = await callRaw(host, 'canvas.eval', { javaScript: '1' });
    expect(failureCode(closed)).toBe('unavailable');
    expect(closed.content[0]!.text).toMatch(/canvas\.present/);

    // present without content shows the last page again.
    expect((await callRaw(host, 'canvas.present', {})).isError).not.toBe(true);
    expect((await callRaw(host, 'canvas.eval', { javaScript: 'location.pathname' })).structuredContent).toEqual({ result: '/second' });
    await callRaw(host, 'canvas.hide', {});
  });

  it('refuses every private spelling for a remote caller before starting anything, and lets a local caller open loopback', async () => {
    const call = direct();
    for (const url of REFUSED) {
      for (const command of ['canvas.navigate', 'canvas.present']) {
        const result = await call(command, { url });
        expect(failureOf(result).code, `${command} ${url}`).toBe('denied');
        expect(failureOf(result).data, url).toMatchObject({ code: 'CANVAS_URL_REFUSED' });
      }
    }
    expect(processesMatching(profileDir)).toEqual([]);
    for (const url of ['file:///etc/passwd', 'javascript:1', 'relative/path', 'https://user:pw@example.com/']) {
      expect(failureOf(await call('canvas.navigate', { url })).code, url).toBe('invalid_arguments');
      expect(failureOf(await call('canvas.navigate', { url }, 'mcp-http')).code, url).toBe('invalid_arguments');
    }

    // A local caller opens this machine in its odd spellings; the page is really there.
    for (const host of ['2130706433', '0x7f000001', '127.1', '[::ffff:127.0.0.1]', '0177.0.0.1']) {
      const result = await call('canvas.navigate', { url: `http://${host}:${pages.port}/spelled` }, 'mcp-stdio');
      expect(result.ok, `${host} ${JSON.stringify(result)}`).toBe(true);
    }
    const value = await call('canvas.eval', { javaScript: 'location.href' }, 'mcp-http');
    expect(value.ok && value.structured).toEqual({ result: `http://127.0.0.1:${pages.port}/spelled` });
    // A remote caller may not read the page a local caller opened.
    expect(failureOf(await call('canvas.eval', { javaScript: 'document.body.innerHTML' })).data).toMatchObject({ code: 'CANVAS_LOCAL_CONTENT' });
    expect(failureOf(await call('canvas.snapshot', {})).code).toBe('denied');
    // Nor have it shown again: present without content gives the remote caller a blank page.
    const before = pages.paths.length;
    expect((await call('canvas.present', {})).ok).toBe(true);
    const blank = await call('canvas.eval', { javaScript: 'location.href + "|" + document.body.innerText' });
    expect(blank.ok && blank.structured).toEqual({ result: 'about:blank|' });
    // Nothing was fetched again for it (Chromium may still ask for the earlier page's favicon).
    expect(pages.paths.slice(before).filter((path) => path !== '/favicon.ico')).toEqual([]);
    await call('canvas.hide', {}, 'cli');
  });

  it("lets a remote caller open the gateway's canvas origin and hosted paths, and blocks its redirects, frames and requests into this machine", async () => {
    await using other = await startPageServer('127.0.0.1');
    await using gateway = await startPageServer('127.0.0.1', {
      '/__openclaw__/cap/tok/redirect': () => ({ status: 302, headers: { location: `${other.origin}/stolen` }, body: '' }),
      '/__openclaw__/cap/tok/__openclaw__/canvas/frames.html': () => ({ body: `<title>f</title><iframe src="${other.origin}/framed"></iframe><img src="${other.origin}/pixel"><script>fetch("${other.origin}/fetched").catch(() => {})</script>` }),
    });
    surface = `${gateway.origin}/__openclaw__/cap/tok`;
    const call = direct();
    try {
      const hosted = await call('canvas.present', { url: '/__openclaw__/canvas/index.html' });
      expect(hosted.ok, JSON.stringify(hosted)).toBe(true);
      expect(gateway.paths).toContain('/__openclaw__/cap/tok/__openclaw__/canvas/index.html');
      expect((await call('canvas.eval', { javaScript: 'location.pathname' })).ok).toBe(true);

      const redirected = await call('canvas.navigate', { url: `${gateway.origin}/__openclaw__/cap/tok/redirect` });
      expect(failureOf(redirected).code).toBe('denied');
      expect(failureOf(redirected).data).toMatchObject({ code: 'CANVAS_URL_REFUSED' });

      expect((await call('canvas.navigate', { url: '/__openclaw__/canvas/frames.html' })).ok).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(other.paths).toEqual([]);
      // The other server is open to a local caller.
      expect((await call('canvas.navigate', { url: `${other.origin}/local` }, 'mcp-http')).ok).toBe(true);
      expect(other.paths).toContain('/local');
    } finally {
      surface = undefined;
    }
    expect(failureOf(await call('canvas.navigate', { url: '/__openclaw__/canvas/x.html' })).data).toMatchObject({ code: 'CANVAS_HOST_NOT_CONFIGURED' });
    await call('canvas.hide', {}, 'cli');
  });

  it('renews the gateway surface before resolving a hosted path (and only then), and still guards the renewed origin alone', async () => {
    await using gateway = await startPageServer('127.0.0.1');
    const refreshes: (AbortSignal | undefined)[] = [];
    const controller = new AbortController();
    const registry = createRegistry();
    registry.register(
      createCanvasCapability({
        env: xvfb.env,
        profileDir: join(dir.path, 'profile-renew'),
        signal: controller.signal,
        gatewayCanvasUrl: {
          current: () => `${gateway.origin}/__openclaw__/cap/old`,
          fresh: async ({ signal }) => {
            refreshes.push(signal);
            return `${gateway.origin}/__openclaw__/cap/new`;
          },
        },
      }),
    );
    const invoker = createInvoker({ registry });
    const call = (command: string, args: Record<string, unknown>) => invoker.invoke({ command, args, transport: 'gateway' }).then((outcome) => outcome.result);
    try {
      expect((await call('canvas.present', { url: '/__openclaw__/canvas/renewed.html' })).ok).toBe(true);
      expect(gateway.paths).toContain('/__openclaw__/cap/new/__openclaw__/canvas/renewed.html');
      expect(refreshes).toHaveLength(1);
      expect(refreshes[0]).toBeInstanceOf(AbortSignal);
      // An absolute URL on the gateway's origin needs no renewal; caps reads the current URL only.
      expect((await call('canvas.navigate', { url: `${gateway.origin}/__openclaw__/cap/new/x` })).ok).toBe(true);
      expect((await call('canvas.caps', {})).ok).toBe(true);
      expect(refreshes).toHaveLength(1);
      expect(failureOf(await call('canvas.navigate', { url: `${pages.origin}/elsewhere` })).data).toMatchObject({ code: 'CANVAS_URL_REFUSED' });
    } finally {
      controller.abort();
    }
  });

  it('loads a hosted path again with a force-renewed surface when the gateway refuses the capability (401), once', async () => {
    await using gateway = await startPageServer('127.0.0.1', {
      '/__openclaw__/cap/lapsed/__openclaw__/canvas/page.html': () => ({ status: 401, body: 'Unauthorized' }),
      '/__openclaw__/cap/lapsed/__openclaw__/canvas/missing.html': () => ({ status: 404, body: 'not found' }),
    });
    const forced: boolean[] = [];
    let current = `${gateway.origin}/__openclaw__/cap/lapsed`;
    const controller = new AbortController();
    const registry = createRegistry();
    registry.register(
      createCanvasCapability({
        env: xvfb.env,
        profileDir: join(dir.path, 'profile-refused'),
        signal: controller.signal,
        gatewayCanvasUrl: {
          current: () => current,
          fresh: async ({ force }) => {
            forced.push(force === true);
            if (force) current = `${gateway.origin}/__openclaw__/cap/renewed`;
            return current;
          },
        },
      }),
    );
    const invoker = createInvoker({ registry });
    const call = (command: string, args: Record<string, unknown>) => invoker.invoke({ command, args, transport: 'gateway' }).then((outcome) => outcome.result);
    try {
      const shown = await call('canvas.navigate', { url: '/__openclaw__/canvas/page.html' });
      expect(shown.ok, JSON.stringify(shown)).toBe(true);
      expect(shown.ok && shown.structured).toMatchObject({ url: `${gateway.origin}/__openclaw__/cap/renewed/__openclaw__/canvas/page.html` });
      expect(forced).toEqual([false, true]);
      expect(gateway.paths).toEqual(expect.arrayContaining(['/__openclaw__/cap/lapsed/__openclaw__/canvas/page.html', '/__openclaw__/cap/renewed/__openclaw__/canvas/page.html']));
      expect(await call('canvas.eval', { javaScript: 'location.pathname' })).toMatchObject({ ok: true, structured: { result: '/__openclaw__/cap/renewed/__openclaw__/canvas/page.html' } });
      // A 404 is the page's answer, not a refused capability: no renewal.
      current = `${gateway.origin}/__openclaw__/cap/lapsed`;
      expect((await call('canvas.present', { url: '/__openclaw__/canvas/missing.html' })).ok).toBe(true);
      expect(forced).toEqual([false, true, false]);
    } finally {
      controller.abort();
    }
  });

  it('answers bad input and A2UI with typed failures', async () => {
    const call = direct();
    const cases: [string, Record<string, unknown>, string][] = [
      ['canvas.present', { url: `${pages.origin}/`, html: '<p>x</p>' }, 'invalid_arguments'],
      ['canvas.present', { html: 'x'.repeat(MAX_CANVAS_HTML_BYTES + 1) }, 'payload_too_large'],
      ['canvas.present', { width: 50 }, 'invalid_arguments'],
      ['canvas.present', { placement: { x: 0, y: 0, width: 100000, height: 100 } }, 'invalid_arguments'],
      ['canvas.navigate', {}, 'invalid_arguments'],
      ['canvas.navigate', { url: 42 }, 'invalid_arguments'],
      ['canvas.eval', {}, 'invalid_arguments'],
      ['canvas.snapshot', { format: 'gif' }, 'invalid_arguments'],
      ['canvas.snapshot', { maxWidth: 1 }, 'invalid_arguments'],
      ['canvas.a2ui.push', { jsonl: '{}' }, 'unsupported'],
      ['canvas.a2ui.pushJSONL', { jsonl: '{}' }, 'unsupported'],
      ['canvas.a2ui.reset', {}, 'unsupported'],
      ['canvas.a2ui.dump', {}, 'unsupported'],
    ];
    for (const [command, args, code] of cases) expect(failureOf(await call(command, args, 'mcp-http')).code, `${command} ${JSON.stringify(args).slice(0, 80)}`).toBe(code);
    expect(failureOf(await call('canvas.a2ui.push', {})).data).toMatchObject({ code: 'A2UI_UNSUPPORTED' });
    expect(failureOf(await call('canvas.snapshot', {})).data).toMatchObject({ code: 'CANVAS_NOT_OPEN' });
  });

  it("the stock host resolves hosted paths against the connected gateway's pluginSurfaceUrls.canvas", async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ pluginSurfaceUrls: { canvas: `${pages.origin}/__openclaw__/cap/stock` } }));
    const home = join(dir.path, 'stock-home');
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ gateway: { enabled: true, url: gateway.url } }), { mode: 0o600 });
    // The pack's canvas runs the browser on the host's own display.
    const saved = process.env.DISPLAY;
    process.env.DISPLAY = xvfb.display;
    try {
      await using host = createHost({ home, port: 0, logFile: false, onLog: () => undefined });
      await host.start();
      await host.pluginsReady();
      await eventually(() => host.status().node.state === 'connected', { what: 'the gateway node to connect', timeoutMs: 30_000 });
      const shown = await host.invoker.invoke({ command: 'canvas.navigate', args: { url: '/__openclaw__/canvas/hosted.html' }, transport: 'gateway' });
      expect(shown.result.ok, JSON.stringify(shown.result)).toBe(true);
      expect(pages.paths).toContain('/__openclaw__/cap/stock/__openclaw__/canvas/hosted.html');
      const profiles = processesMatching(join(home, 'plugins-data'));
      expect(profiles.length).toBeGreaterThan(0);
      await host.close();
      await eventually(() => processesMatching(join(home, 'plugins-data')).length === 0, { what: 'the canvas browser to close with the host', timeoutMs: 15_000 });
    } finally {
      if (saved === undefined) delete process.env.DISPLAY;
      else process.env.DISPLAY = saved;
    }
  });

  it.skipIf(!existsSync(cliPath))('works over MCP stdio (capnode mcp, the stock pack): html, eval, snapshot, a refused spelling is still open to this local client', async () => {
    const home = join(dir.path, 'stdio-home');
    mkdirSync(home, { mode: 0o700 });
    const client = new Client({ name: 'canvas-stdio', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(xvfb.env as Record<string, string>), CAPNODE_HOME: home }, stderr: 'pipe' }));
    try {
      const shown = (await client.callTool({ name: 'canvas.present', arguments: { html: '<title>stdio</title><script>window.k = "v"</script>' } })) as { isError?: boolean };
      expect(shown.isError, JSON.stringify(shown)).not.toBe(true);
      expect(((await client.callTool({ name: 'canvas.eval', arguments: { javaScript: 'document.title + window.k' } })) as { structuredContent?: unknown }).structuredContent).toEqual({ result: 'stdiov' });
      const shot = (await client.callTool({ name: 'canvas.snapshot', arguments: { maxWidth: 320 } })) as { structuredContent?: { width?: number; format?: string } };
      expect(shot.structuredContent).toMatchObject({ format: 'png', width: 320 });
      const local = (await client.callTool({ name: 'canvas.navigate', arguments: { url: `http://2130706433:${pages.port}/stdio` } })) as { isError?: boolean };
      expect(local.isError).not.toBe(true);
      expect(pages.paths).toContain('/stdio');
      expect(processesMatching(join(home, 'plugins-data')).length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    await eventually(() => processesMatching(join(home, 'plugins-data')).length === 0, { what: 'the canvas browser to close with capnode mcp', timeoutMs: 20_000 });
  });

  it('closes the browser when the host closes', async () => {
    const own = join(dir.path, 'host-profile');
    const controller = new AbortController();
    const registry = createRegistry();
    registry.register(createCanvasCapability({ env: xvfb.env, profileDir: own, signal: controller.signal }));
    const invoker = createInvoker({ registry });
    const shown = await invoker.invoke({ command: 'canvas.present', args: { html: '<p>bye</p>' }, transport: 'mcp-http' });
    expect(shown.result.ok).toBe(true);
    expect(processesMatching(own).length).toBeGreaterThan(0);
    controller.abort();
    await eventually(() => processesMatching(own).length === 0, { what: 'the canvas browser to exit with the host', timeoutMs: 10_000 });
  });
});
