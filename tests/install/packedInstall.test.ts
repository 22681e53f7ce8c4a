// The packed install, as a user gets it: `pnpm pack` of every publishable package, `npm install -g`
// of the tarballs into a fresh prefix, then the installed `capnode` from a directory outside the
// repository. Long (≈30-60 s: the third-party dependencies come from the npm registry, through the
// machine's npm cache); set CAPNODE_SKIP_LONG=1 to skip it in a quick local run.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** Every publishable package (the tray too, when it is built). */
const PACKAGES = ['packages/toolkit', 'packages/protocol', 'packages/capabilities', 'packages/mcp-server', 'packages/mcp-client', 'packages/gateway-bridge', 'packages/host', 'apps/cli', 'apps/tray'].filter(
  (dir) => dir !== 'apps/tray' || existsSync(join(repoRoot, dir, 'dist')),
);

interface PackedManifest {
  name: string;
  version: string;
  license?: string;
  description?: string;
  keywords?: string[];
  engines?: { node?: string };
  files?: string[];
  repository?: { type?: string; url?: string; directory?: string };
  publishConfig?: { access?: string };
  bin?: Record<string, string>;
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** The environment for npm: this machine's cache, none of pnpm's npm_config_* settings. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_|^NODE_OPTIONS$|^CAPNODE_/i.test(key)) env[key] = value;
  return env;
}

/** Every file target (`default`, `types`, `import`, …) of an exports map, conditions of the repo's own source build excepted. */
function exportTargets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([condition, target]) => (condition === '@capnode/source' ? [] : exportTargets(target)));
}

describe.skipIf(process.env.CAPNODE_SKIP_LONG === '1')('packed install (long)', () => {
  let work: string;
  const tarballs: { dir: string; file: string; manifest: PackedManifest; entries: string[] }[] = [];

  beforeAll(async () => {
    for (const dir of PACKAGES) if (!existsSync(join(repoRoot, dir, 'dist'))) throw new Error(`${dir}/dist is missing; build first: pnpm build`);
    work = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-install-')));
    mkdirSync(join(work, 'packs'));
    for (const dir of PACKAGES) {
      const before = new Set(readdirSync(join(work, 'packs')));
      await run('pnpm', ['pack', '--pack-destination', join(work, 'packs')], { cwd: join(repoRoot, dir) });
      const file = readdirSync(join(work, 'packs')).find((name) => !before.has(name) && name.endsWith('.tgz'));
      if (!file) throw new Error(`pnpm pack of ${dir} made no tarball`);
      const path = join(work, 'packs', file);
      const manifest = JSON.parse((await run('tar', ['-xzOf', path, 'package/package.json'], { maxBuffer: 16 * 1024 * 1024 })).stdout) as PackedManifest;
      const entries = (await run('tar', ['-tzf', path], { maxBuffer: 16 * 1024 * 1024 })).stdout.split('\n').filter(Boolean);
      tarballs.push({ dir, file: path, manifest, entries });
    }
  }, 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('each tarball is ready to publish: real versions for workspace deps, metadata, every export and bin present', () => {
    const versions = new Map(tarballs.map((tarball) => [tarball.manifest.name, tarball.manifest.version]));
    for (const { dir, manifest, entries } of tarballs) {
      const where = `${dir} (${manifest.name})`;
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const) {
        for (const [name, range] of Object.entries(manifest[field] ?? {})) {
          expect(range, `${where} ${field}.${name}`).not.toMatch(/^(workspace|link|file):/);
          if (versions.has(name)) expect(range, `${where} ${field}.${name}`).toBe(versions.get(name));
        }
      }
      expect(manifest.license, where).toBe('MIT');
      expect(manifest.engines?.node, where).toBe('>=20');
      expect(manifest.description, where).toBeTruthy();
      expect(manifest.keywords?.length, where).toBeGreaterThan(0);
      expect(manifest.repository, where).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\//), directory: dir });
      expect(manifest.files, where).toContain('dist');
      if (manifest.name.startsWith('@')) expect(manifest.publishConfig?.access, where).toBe('public');
      expect(entries, where).toEqual(expect.arrayContaining(['package/package.json', 'package/README.md', 'package/LICENSE']));
      expect(entries.filter((entry) => /^package\/(src|node_modules)\//.test(entry) || entry.endsWith('.test.js')), where).toEqual([]);
      const targets = [...Object.values(manifest.bin ?? {}), ...Object.values(manifest.exports ?? {}).flatMap(exportTargets)];
      for (const target of targets) expect(entries, `${where} → ${target}`).toContain(`package/${target.replace(/^\.\//, '')}`);
    }
  });

  it('npm install -g of the tarballs gives a capnode that serves MCP from any directory', async () => {
    const prefix = join(work, 'prefix');
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs.map((tarball) => tarball.file)], {
      cwd: work,
      env: npmEnv(),
      maxBuffer: 16 * 1024 * 1024,
    });
    const bin = join(prefix, process.platform === 'win32' ? 'capnode.cmd' : 'bin/capnode');
    expect(existsSync(bin)).toBe(true);
    if (PACKAGES.includes('apps/tray')) expect(existsSync(join(prefix, 'bin', 'capnode-tray'))).toBe(true);
    const cwd = join(work, 'elsewhere');
    const home = join(work, 'home');
    mkdirSync(cwd);
    const env = { ...npmEnv(), CAPNODE_HOME: home };
    const cliVersion = (JSON.parse(readFileSync(join(repoRoot, 'apps/cli/package.json'), 'utf8')) as { version: string }).version;
    expect((await run(bin, ['--version'], { cwd, env })).stdout.trim()).toBe(`capnode ${cliVersion}`);

    const serve = spawn(bin, ['serve', '--port', '0'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    serve.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    serve.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<number | null>((resolveExit) => serve.on('close', resolveExit));
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ready line in 30 s\nstdout: ${out}\nstderr: ${err}`)), 30_000);
        serve.stdout.on('data', () => {
          const match = /capnode ready: MCP on (\S+) \(token: (.+)\)/.exec(out);
          if (match) {
            clearTimeout(timer);
            resolveUrl(match[1]!);
          }
        });
        void exited.then((code) => reject(new Error(`serve exited with ${code}\nstdout: ${out}\nstderr: ${err}`)));
      });
      const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
      const client = new Client({ name: 'packed-install-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['device.info', 'system.which', 'app.status']));
      } finally {
        await client.close();
      }
      const status = JSON.parse((await run(bin, ['status', '--json'], { cwd, env })).stdout) as { mcp: { url: string } };
      expect(status.mcp.url).toBe(url);

      // `capnode ui` from the installed package: its module loads, asks the host and prints one line.
      const printed = (await run(bin, ['ui', '--print-url'], { cwd, env })).stdout.trim().split('\n');
      expect(printed).toHaveLength(1);
      expect(printed[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+$/);
    } finally {
      if (serve.exitCode === null) serve.kill('SIGTERM');
      await exited;
    }
  }, 150_000);
});
