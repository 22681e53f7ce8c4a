// browser.navigate + browser.snapshot through MCP HTTP (issue 16): p50 of one navigate-then-snapshot of a
// local page by a host with the pack's dedicated browser, against bare playwright-core doing the same
// (`page.goto` + `page.ariaSnapshot({ mode: 'ai' })`) on its own Chromium in the same run. Both browsers
// are Debian's headless Chromium on a persistent profile; rounds interleave the two.
// Run as `node bench/browser.mjs --host` it is the host child (prints READY {url, token}).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, percentile, rootDir, startChild } from './lib/util.mjs';

/** A page with some structure to snapshot: a form and a list of links. */
const PAGE = `<!doctype html><html><head><title>Bench page</title></head><body><h1>Bench</h1>
<form><label for="q">Query</label><input id="q"><select aria-label="Kind"><option>a</option><option>b</option></select><button type="button">Go</button></form>
<ul>${Array.from({ length: 50 }, (_, i) => `<li><a href="#i${i}">Item ${i}</a> <span>detail ${i}</span></li>`).join('')}</ul></body></html>`;

/** The host child: a real host (createHost) with the pack's browser, consent allowed, headless. */
async function runHost() {
  const { createHost } = await import(join(rootDir, 'packages/host/dist/index.js'));
  const { createBrowserCapability } = await import(join(rootDir, 'packages/capabilities/dist/pack.js'));
  const home = mkdtempSync(join(tmpdir(), 'capnode-bench-browser-'));
  writeFileSync(join(home, 'settings.json'), `${JSON.stringify({ consent: { browser: 'allow' } })}\n`, { mode: 0o600 });
  const browser = createBrowserCapability({ profileDir: join(home, 'profile'), headless: true });
  const host = createHost({ home, port: 0, builtinPlugins: false, capabilities: [browser], onLog: () => undefined });
  const status = await host.start();
  const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
  const stop = async () => {
    await host.close();
    await browser.close();
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
  console.log(`READY ${JSON.stringify({ url: status.mcp.url, token })}`);
}

async function call(url, token, name, args) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"isError":true')) throw new Error(`${name}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

async function capnodeOnce(url, token, page) {
  const started = performance.now();
  await call(url, token, 'browser.navigate', { url: page });
  const text = await call(url, token, 'browser.snapshot', {});
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

const stats = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90), minMs: sorted[0] };
};

/** Measures navigate + snapshot (MCP HTTP, one call at a time) against bare playwright-core; `ratio` = capnode p50 / bare p50 (target ≤ 1.2). */
export async function benchBrowser({ runs = 40, log = () => undefined } = {}) {
  for (const file of ['packages/host/dist/index.js', 'packages/capabilities/dist/pack.js']) {
    if (!existsSync(join(rootDir, file))) return { skipped: `browser: SKIP, ${file} missing (pnpm build)` };
  }
  const { findChromiumExecutable } = await import(join(rootDir, 'packages/capabilities/dist/pack.js'));
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
    const own = stats(capnode);
    const bareStats = stats(reference);
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
