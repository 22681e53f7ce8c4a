// Idle RSS of a host with the capability pack loaded (the stock default) against one without any
// built-in plugins, alternating runs so both see the same machine state. The pack's backends load
// lazily (inside execute), so the ratio stays close to 1.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { benchDir, median, rootDir } from './lib/util.mjs';
import { spawn } from 'node:child_process';

function sample(mode) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(benchDir, 'fixtures/idleHost.mjs'), mode], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /^READY (.*)$/m.exec(out);
      if (match) {
        child.stdin.end();
        resolve(JSON.parse(match[1]));
      }
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (!/^READY/m.test(out)) reject(new Error(`idle host (${mode}) exited ${code}: ${err.slice(0, 400)}`));
    });
  });
}

/** Runs the section; returns { withPack, without, ratio } (median RSS in bytes) or { skipped }. */
export async function benchPluginsRss({ runs = 5, log } = {}) {
  if (!existsSync(join(rootDir, 'packages/host/dist/index.js'))) return { skipped: 'plugins RSS: SKIP, packages/host is not built' };
  const withPack = [];
  const without = [];
  for (let i = 0; i < runs; i += 1) {
    without.push(await sample('none'));
    withPack.push(await sample('pack'));
    log?.(`  round ${i + 1}: without ${(without.at(-1).rss / 2 ** 20).toFixed(1)} MiB, with the pack ${(withPack.at(-1).rss / 2 ** 20).toFixed(1)} MiB`);
  }
  const rssWith = median(withPack.map((s) => s.rss));
  const rssWithout = median(without.map((s) => s.rss));
  return {
    withPack: { rss: rssWith, commands: withPack[0].commands, plugins: withPack[0].plugins },
    without: { rss: rssWithout, commands: without[0].commands, plugins: without[0].plugins },
    ratio: rssWith / rssWithout,
  };
}
