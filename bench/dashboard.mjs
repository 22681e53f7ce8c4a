// Dashboard section: first-load bytes (gzip) of the built UI as the dashboard serves it, and first
// paint of the status page in Debian's Chromium (playwright-core), against a real host (`createHost`
// from packages/host/dist, its own CAPNODE_HOME, the dashboard on a free loopback port). Each run is
// a fresh browser context (cold cache) signed in through a fresh one-time login URL, as `capnode ui`
// does. Reference, same browser, same run: a bare `node:http` page (one line of HTML) for the paint floor.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { median, rootDir } from './lib/util.mjs';

const HOST_DIST = join(rootDir, 'packages/host/dist/index.js');
const UI_DIR = join(rootDir, 'packages/host/dist/ui');
const CHROMIUM = process.env.CAPNODE_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Bytes of every response the page loaded from `origin`, gzipped here (the listener itself does not compress). */
function firstLoadBytes(responses) {
  let raw = 0;
  let gzip = 0;
  const files = [];
  for (const { url, body } of responses) {
    raw += body.length;
    const size = gzipSync(body, { level: 9 }).length;
    gzip += size;
    // Paths without the dashboard's random base path (`/d/<random>`), so runs compare.
    files.push({ path: new URL(url).pathname.replace(/^\/d\/[^/]+/, ''), raw: body.length, gzip: size });
  }
  return { raw, gzip, files };
}

/** Paint timings of the page now open: FCP (waited for: it is reported after the paint), and when the status content was painted. */
async function paintTimings(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const done = (fcp) => resolve({ fcpMs: fcp, statusMs: window.__statusPaintedAt });
        const seen = performance.getEntriesByName('first-contentful-paint')[0];
        if (seen) return done(seen.startTime);
        new PerformanceObserver((list, observer) => {
          const entry = list.getEntriesByName('first-contentful-paint')[0];
          if (!entry) return;
          observer.disconnect();
          done(entry.startTime);
        }).observe({ type: 'paint', buffered: true });
        setTimeout(() => done(undefined), 5000);
      }),
  );
}

async function startBarePage() {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>bare</title><p>bare page</p>'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Runs the dashboard section; returns { bytes, statusPaint, fcp, bare } or { skipped }. */
export async function benchDashboard({ runs = 7, log } = {}) {
  if (!existsSync(HOST_DIST) || !existsSync(join(UI_DIR, 'index.html'))) return { skipped: 'dashboard: SKIP, not built (packages/host/dist with dist/ui)' };
  if (!existsSync(CHROMIUM)) return { skipped: `dashboard: SKIP, no Chromium at ${CHROMIUM} (apt-get install chromium)` };
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (error) {
    return { skipped: `dashboard: SKIP, playwright-core not installed (${error.message})` };
  }
  const { createHost } = await import(pathToFileURL(HOST_DIST).href);
  const home = mkdtempSync(join(tmpdir(), 'capnode-bench-ui-'));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ dashboard: { enabled: true, port: 0 }, approvals: { notify: false } }), { mode: 0o600 });
  const host = createHost({ home, port: 0, onLog: () => {} });
  const bare = await startBarePage();
  let browser;
  try {
    const status = await host.start();
    const mcpUrl = status.mcp.url;
    const adminToken = readFileSync(host.paths.adminToken, 'utf8').trim();
    const loginUrl = async () => {
      const response = await fetch(new URL('/_capnode/ui/login', mcpUrl), { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } });
      if (!response.ok) throw new Error(`POST /_capnode/ui/login answered ${response.status}`);
      return (await response.json()).url;
    };
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    log?.(`host ${mcpUrl}, dashboard ${host.status().dashboard?.url}; ${runs} cold runs after 1 warm-up`);
    const statusPaint = [];
    const fcp = [];
    const bareFcp = [];
    let bytes;
    for (let run = 0; run <= runs; run += 1) {
      // Dashboard: fresh context, the one-time URL, then the status page with the host's data painted.
      const context = await browser.newContext();
      const page = await context.newPage();
      const responses = [];
      const origin = new URL(host.status().dashboard.url).origin;
      page.on('response', async (response) => {
        if (!response.url().startsWith(origin) || response.url().includes('/api/events') || response.status() >= 300) return;
        try {
          responses.push({ url: response.url(), body: await response.body() });
        } catch {
          // Streamed or aborted; not part of the first load.
        }
      });
      // Marks the moment the status content (the MCP listener's URL) is in the DOM, before paint.
      await page.addInitScript((url) => {
        new MutationObserver((_records, observer) => {
          if (document.body?.innerText.includes(url)) {
            observer.disconnect();
            requestAnimationFrame(() => {
              window.__statusPaintedAt = performance.now();
            });
          }
        }).observe(document, { subtree: true, childList: true, characterData: true });
      }, mcpUrl);
      await page.goto(await loginUrl());
      await page.waitForFunction(() => window.__statusPaintedAt !== undefined, undefined, { timeout: 10_000 });
      const timings = await paintTimings(page);
      // The first load: the page, its script and style, and the API reads of the status page.
      if (run === 1) bytes = firstLoadBytes(responses);
      await context.close();
      const bareContext = await browser.newContext();
      const barePage = await bareContext.newPage();
      await barePage.goto(bare.url);
      const bareTimings = await paintTimings(barePage);
      await bareContext.close();
      if (run === 0) continue; // warm-up: Chromium's own first-run costs
      statusPaint.push(timings.statusMs);
      fcp.push(timings.fcpMs);
      bareFcp.push(bareTimings.fcpMs);
    }
    const assetFiles = bytes.files.filter((file) => !file.path.startsWith('/api/'));
    return {
      bytes: { ...bytes, assetsGzip: assetFiles.reduce((sum, file) => sum + file.gzip, 0) },
      statusPaint: { medianMs: median(statusPaint), samples: statusPaint },
      fcp: { medianMs: median(fcp), samples: fcp },
      bare: { medianMs: median(bareFcp), samples: bareFcp },
    };
  } catch (error) {
    return { skipped: `dashboard: SKIP, ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  } finally {
    await browser?.close().catch(() => undefined);
    await bare.close();
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchDashboard({ log: console.log });
  console.log(JSON.stringify(result, null, 2));
}
