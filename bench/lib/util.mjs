import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const rootDir = join(benchDir, '..');

/** Paths of built package entry points the bench needs; missing ones mean "skip, build first". */
export const dists = {
  capabilities: join(rootDir, 'packages/capabilities/dist/index.js'),
  mcpServerNode: join(rootDir, 'packages/mcp-server/dist/node.js'),
  mcpServerStdio: join(rootDir, 'packages/mcp-server/dist/stdio.js'),
  cli: join(rootDir, 'apps/cli/dist/bin.js'),
  host: join(rootDir, 'packages/host/dist/index.js'),
  pack: join(rootDir, 'packages/capabilities/dist/pack.js'),
};

/** Names of the listed dist files that do not exist. */
export function missingDists(...keys) {
  return keys.filter((key) => !existsSync(dists[key])).map((key) => dists[key].slice(rootDir.length + 1));
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export function median(values) {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** Sends `child` SIGTERM and resolves when it exited (SIGKILL after `graceMs`); at once when it already has. */
export function stopProcess(child, graceMs = 5000) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), graceMs).unref();
  });
}

const liveChildren = new Set();
const killAll = () => {
  for (const child of liveChildren) child.kill('SIGKILL');
};
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/**
 * Spawns `node <script> ...args` and resolves once it prints a line matching `ready`; the match is
 * handed to `parse`. The handle's `stop()` sends SIGTERM and waits for exit (SIGKILL after 5 s).
 */
export function startChild(script, { args = [], env, ready = /^READY (.*)$/m, parse = (m) => JSON.parse(m[1]), timeoutMs = 30_000 } = {}) {
  // stdin stays open as a lifeline: the bench's own servers exit when it closes (bench process gone).
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk) => {
    err += chunk;
  });
  const stop = () => stopProcess(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no ready line within ${timeoutMs} ms`)), timeoutMs);
    const finish = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${script.slice(rootDir.length + 1)}: ${error.message}\nstdout: ${out.slice(-1000)}\nstderr: ${err.slice(-2000)}`));
    };
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = ready.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      try {
        resolve({ info: parse(match), child, stop, stderr: () => err });
      } catch (error) {
        finish(error);
      }
    });
    child.once('error', finish);
    child.once('exit', (code, signal) => finish(new Error(`exited early (code ${code}, signal ${signal})`)));
  });
}

/** A loopback port that was free a moment ago (for CLIs that need a fixed `--port`). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export const fmt = {
  int: (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-'),
  ms: (n) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : '-'),
  ratio: (n) => (Number.isFinite(n) ? n.toFixed(3) : '-'),
};

/** Prints rows (arrays of strings) as an aligned table under `header`. */
export function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}
