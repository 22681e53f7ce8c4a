// browser.navigate + browser.snapshot through MCP HTTP (issue 16): p50 of one navigate-then-snapshot of a
// local page by a host with the pack's dedicated browser, against bare playwright-core doing the same
// (`page.goto` + `page.ariaSnapshot({ mode: 'ai' })`) on its own Chromium in the same run. Both browsers
// are Debian's headless Chromium on a persistent profile; rounds interleave the two.
// Run as `node bench/browser.mjs --host` it is the host child (prints READY {url, token}).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callTool, firstMissingBuild, latencyStats, serveBenchHost } from './lib/hostBench.mjs';
import { dists, median, startChild } from './lib/util.mjs';

/** A page with some structure to snapshot: a form and a list of links. */
const PAGE = `<!doctype html><html><head><title>Bench page</title></head><body><h1>Bench</h1>
<form><label for="q">Query</label><input id="q"><select aria-label="Kind"><option>a</option><option>b</option></select><button type="button">Go</button></form>
<ul>${Array.from({ length: 50 }, (_, i) => `<li><a href="#i${i}">Item ${i}</a> <span>detail ${i}</span></li>`).join('')}</ul></body></html>`;

/** The host child: a real host (createHost) with the pack's browser, consent allowed, headless. */
const runHost = () =>
  serveBenchHost({
    name: 'browser',
    consent: ['browser'],
    makeCapabilities: (pack, home) => [pack.createBrowserCapability({ profileDir: join(home, 'profile'), headless: true })],
    onClose: ([browser]) => browser.close(),
  });

async function capnodeOnce(url, token, page) {
  const started = performance.now();
  await callTool(url, token, 'browser.navigate', { url: page });
  const { text } = await callTool(url, token, 'browser.snapshot', {});
  const elapsed = performance.now() - started;
  if (!text.includes('Item 49')) throw new Error('browser.snapshot: the page is not in the snapshot');
  return elapsed;
}

async function bareOnce(page, url) {
  const started = performance.now();
  await page.goto(url, { waitUntil: 'load' });
  const snapshot = await page.ariaSnapshot({ mode: 'ai' });
  const elapsed = performance.now() - started;
  if (!snapshot.includes('Item 49')) throw new Error('bare snapshot: the page is not in the snapshot');
  return elapsed;
}

/** Measures navigate + snapshot (MCP HTTP, one call at a time) against bare playwright-core; `ratio` = capnode p50 / bare p50 (target ≤ 1.2). */
export async function benchBrowser({ runs = 40, log = () => undefined } = {}) {
  const unbuilt = firstMissingBuild();
  if (unbuilt) return { skipped: `browser: SKIP, ${unbuilt} missing (pnpm build)` };
  const { findChromiumExecutable } = await import(dists.pack);
  const executablePath = findChromiumExecutable();
  if (!executablePath) return { skipped: 'browser: SKIP, no Chromium (Debian: chromium)' };
  const { chromium } = await import('playwright-core');
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const profile = mkdtempSync(join(tmpdir(), 'capnode-bench-bare-'));
  let host;
  let bare;
  try {
    host = await startChild(fileURLToPath(import.meta.url), { args: ['--host'], timeoutMs: 60_000 });
    const { url, token } = host.info;
    bare = await chromium.launchPersistentContext(profile, { executablePath, headless: true, acceptDownloads: false, viewport: { width: 1280, height: 800 } });
    const page = bare.pages()[0] ?? (await bare.newPage());
    for (let i = 0; i < 3; i++) {
      await capnodeOnce(url, token, `${origin}/warm${i}`);
      await bareOnce(page, `${origin}/warm${i}`);
    }
    log(`local page ${origin}, ${runs} interleaved navigate+snapshot runs each (order alternating)`);
    const capnode = [];
    const reference = [];
    for (let i = 0; i < runs; i++) {
      const target = `${origin}/page${i}`;
      if (i % 2 === 0) {
        capnode.push(await capnodeOnce(url, token, target));
        reference.push(await bareOnce(page, target));
      } else {
        reference.push(await bareOnce(page, target));
        capnode.push(await capnodeOnce(url, token, target));
      }
    }
    const own = latencyStats(capnode);
    const bareStats = latencyStats(reference);
    return { capnode: own, bare: bareStats, ratio: own.p50Ms / bareStats.p50Ms, medianMs: median(capnode) };
  } finally {
    await bare?.close();
    await host?.stop();
    await new Promise((resolve) => server.close(resolve));
    rmSync(profile, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--host')) await runHost();
  else console.log(JSON.stringify(await benchBrowser({ log: (line) => console.log(line) }), null, 2));
}
