// Sequential tools/call round trips over stdio with the SDK v2 client: capnode's serveStdio vs the
// SDK's own McpServer + StdioServerTransport, alternating rounds so drift hits both alike.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { benchDir, median, missingDists, percentile } from './lib/util.mjs';

async function round(fixture, { calls, warmup }) {
  const client = new Client({ name: 'capnode-bench', version: '0.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  try {
    await client.connect(transport);
    const call = async () => {
      const result = await client.callTool({ name: 'bench.echo', arguments: { text: 'hello' } });
      if (result.isError || result.content?.[0]?.text !== 'hello') throw new Error(`unexpected result ${JSON.stringify(result).slice(0, 300)}`);
    };
    for (let i = 0; i < warmup; i++) await call();
    const latencies = new Float64Array(calls);
    const started = performance.now();
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await call();
      latencies[i] = performance.now() - t0;
    }
    const elapsed = performance.now() - started;
    latencies.sort();
    return { callsPerSec: (calls * 1000) / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  } catch (error) {
    throw new Error(`${error.message}\nserver stderr: ${stderr.slice(-1500)}`);
  } finally {
    await client.close().catch(() => {});
  }
}

/** Runs the stdio section; returns { sdk, capnode, ratio } or { skipped }. */
export async function benchStdio({ rounds, calls, warmup, log }) {
  const missing = missingDists('capabilities', 'mcpServerStdio');
  if (missing.length) return { skipped: `stdio: SKIP, not built (${missing.join(', ')})` };
  const fixtures = { sdk: join(benchDir, 'fixtures/stdioSdk.mjs'), capnode: join(benchDir, 'fixtures/stdioCapnode.mjs') };
  const results = { sdk: [], capnode: [] };
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? ['sdk', 'capnode'] : ['capnode', 'sdk']) {
      log?.(`  stdio round ${r + 1}/${rounds}: ${side} ...`);
      try {
        results[side].push(await round(fixtures[side], { calls, warmup }));
      } catch (error) {
        return { skipped: `stdio: SKIP, ${side} round failed: ${error.message.split('\n').slice(0, 8).join(' | ')}` };
      }
    }
  }
  const summarize = (list) => ({
    callsPerSec: median(list.map((x) => x.callsPerSec)),
    p50Ms: median(list.map((x) => x.p50Ms)),
    p99Ms: median(list.map((x) => x.p99Ms)),
    rounds: list,
  });
  const sdk = summarize(results.sdk);
  const capnode = summarize(results.capnode);
  return { sdk, capnode, ratio: capnode.callsPerSec / sdk.callsPerSec };
}
