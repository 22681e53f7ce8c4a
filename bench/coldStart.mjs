// Cold start of `capnode --list-tools` against a running host (a real `capnode serve` with its own
// CAPNODE_HOME), next to `node -e 0`, alternating so both see the same machine state.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { dists, freePort, median, missingDists, percentile, startChild } from './lib/util.mjs';

function timed(args, env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ ms: performance.now() - t0, code, out, err }));
  });
}

const summarize = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { medianMs: median(sorted), p90Ms: percentile(sorted, 90), minMs: sorted[0], samples };
};

/** Runs the cold-start section; returns { cli, node, ratio } or { skipped }. */
export async function benchColdStart({ runs, log }) {
  const missing = missingDists('cli');
  if (missing.length) return { skipped: `cold start: SKIP, not built (${missing.join(', ')})` };
  const home = mkdtempSync(join(tmpdir(), 'capnode-bench-'));
  const env = { ...process.env, CAPNODE_HOME: home };
  let host;
  try {
    const port = await freePort();
    log?.(`  starting \`capnode serve --port ${port}\` (CAPNODE_HOME=${home}) ...`);
    try {
      host = await startChild(dists.cli, { args: ['serve', '--port', String(port)], env, ready: /ready/i, parse: () => ({ port }) });
    } catch (error) {
      return { skipped: `cold start: SKIP, \`capnode serve\` did not print a ready line: ${error.message.split('\n').slice(0, 6).join(' | ')}` };
    }
    // The plain command finds the running host through CAPNODE_HOME; `--url` is the fallback.
    let listArgs = [dists.cli, '--list-tools'];
    let first = await timed(listArgs, env);
    let discovery = 'CAPNODE_HOME';
    if (first.code !== 0) {
      listArgs = [...listArgs, '--url', `http://127.0.0.1:${port}/`];
      discovery = `--url (plain command exited ${first.code}: ${(first.err || first.out).trim().slice(0, 200)})`;
      first = await timed(listArgs, env);
    }
    if (first.code !== 0) {
      return { skipped: `cold start: SKIP, \`capnode --list-tools\` exited ${first.code}: ${(first.err || first.out).slice(0, 400)}` };
    }
    const cli = [];
    const bare = [];
    for (let i = 0; i < runs; i++) {
      const a = await timed(listArgs, env);
      if (a.code !== 0) return { skipped: `cold start: SKIP, run ${i + 1} exited ${a.code}: ${a.err.slice(0, 300)}` };
      cli.push(a.ms);
      bare.push((await timed(['-e', '0'], env)).ms);
    }
    const result = { cli: summarize(cli), node: summarize(bare), discovery, toolsListed: first.out.trim().split('\n').length };
    return { ...result, overheadMs: result.cli.medianMs - result.node.medianMs };
  } finally {
    await host?.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
