// Launching the official conformance suite (`@modelcontextprotocol/conformance`, needs Node 22);
// shared by the server runner (run.mjs) and the client runner (runClient.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The suite's CLI entry in node_modules. */
export function suiteBin() {
  const pkg = require.resolve('@modelcontextprotocol/conformance/package.json');
  return join(dirname(pkg), 'dist', 'index.js');
}

/**
 * The Node 22 command for the suite: this node when it is ≥ 22, else `$CONFORMANCE_NODE`, else
 * `npx -y node@22` resolved once to its binary (so each run starts fast; needs only the npm registry).
 */
export function node22Command() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return [process.execPath];
  if (process.env.CONFORMANCE_NODE) return [process.env.CONFORMANCE_NODE];
  const probe = spawnSync('npx', ['-y', 'node@22', '-p', 'process.execPath'], { encoding: 'utf8', timeout: 300_000 });
  const path = probe.status === 0 ? probe.stdout.trim().split('\n').at(-1) : '';
  return path && existsSync(path) ? [path] : ['npx', '-y', 'node@22'];
}

/** Runs the suite with `suiteArgs`; resolves with its exit code and output, rejects past `timeoutMs`. */
export function runSuite(node, suiteArgs, { verbose = false, timeoutMs = 120_000 } = {}) {
  const [cmd, ...pre] = node;
  const child = spawn(cmd, [...pre, suiteBin(), ...suiteArgs], { stdio: ['ignore', 'pipe', 'pipe'], cwd: here });
  let log = '';
  const collect = (chunk) => {
    log += chunk;
    if (verbose) process.stdout.write(chunk);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`conformance suite did not finish within ${timeoutMs / 1000} s\n${log.slice(-4000)}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, log });
    });
  });
}
