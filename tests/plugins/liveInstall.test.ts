// `capnode plugins new` → `npm install && npm test` offline (an empty npm cache: nothing can come from a
// registry) → `capnode plugins add` into a running host, called by a real SDK client without a restart
// → `capnode plugins remove`: the tool is gone, with tools/list_changed.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { cliPath, completion, runCli, startServe, tempHome } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';

/** npm's environment: an empty cache, offline, none of pnpm's npm_config_* settings nor the test's CAPNODE_*. */
function offlineNpmEnv(cache: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_|^NODE_OPTIONS$|^CAPNODE_/i.test(key)) env[key] = value;
  return { ...env, npm_config_cache: cache, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return completion(child);
}

describe('a plugin without a registry', () => {
  it('scaffolds, installs and tests offline; plugins add loads it into the running host at once, remove unloads it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'capnode-live-'));
    using temp = tempHome();
    try {
      // A umask that leaves files group-writable (user private groups): the project is made 0644/0755 anyway, so the host takes it.
      const created = await run('sh', ['-c', 'umask 002 && exec "$0" "$@"', process.execPath, cliPath, 'plugins', 'new', 'capnode-plugin-weather'], parent, { ...process.env, CAPNODE_HOME: temp.home });
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain('npm install && npm test');
      const project = join(parent, 'capnode-plugin-weather');
      const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
      expect(manifest.devDependencies['@capnode/capabilities']).toMatch(/^file:\//);

      // The printed next step, with nothing reachable from a registry.
      const env = offlineNpmEnv(join(parent, 'npm-cache'));
      const installed = await run('npm', ['install', '--offline'], project, env);
      expect(installed.code, `${installed.stdout}\n${installed.stderr}`).toBe(0);
      const tested = await run('npm', ['test'], project, env);
      expect(tested.code, `${tested.stdout}\n${tested.stderr}`).toBe(0);
      expect(tested.stdout).toMatch(/# pass 1/);

      await using serve = await startServe(temp.home);
      let changes = 0;
      const client = new Client({ name: 'live-install', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' }, listChanged: { tools: { onChanged: () => void (changes += 1) } } });
      const token = readFileSync(join(temp.home, 'mcp-token'), 'utf8').trim();
      await client.connect(new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      try {
        const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
        expect(await names()).not.toContain('weather.hello');

        // A file the group can write: the running host refuses it and the CLI says how to fix it; after the fix, add again loads it.
        const entry = join(project, 'index.js');
        chmodSync(entry, 0o664);
        const refused = await runCli(['plugins', 'add', project], temp.home);
        expect(refused.code).toBe(1);
        expect(refused.stdout).toContain('added: plugin capnode-plugin-weather');
        expect(refused.stderr).toContain(`failed to load in the running host`);
        expect(refused.stderr).toContain(`fix: chmod go-w ${realpathSync(entry)}`);
        expect(await names()).not.toContain('weather.hello');
        chmodSync(entry, 0o644);
        const added = await runCli(['plugins', 'add', project], temp.home);
        expect(added.code, added.stderr).toBe(0);
        expect(added.stdout).toContain('already configured: plugin capnode-plugin-weather');
        expect(added.stdout).toMatch(/loaded into the running host \(pid \d+\): weather\.hello/);
        await eventually(() => changes > 0, { what: 'tools/list_changed after plugins add', timeoutMs: 20_000 });
        expect(await names()).toContain('weather.hello');
        const called = await client.callTool({ name: 'weather.hello', arguments: { name: 'live' } });
        expect(called.isError).toBeFalsy();
        expect((called.content as { text: string }[])[0]!.text).toBe('Hello, live!');

        const seen = changes;
        const removed = await runCli(['plugins', 'remove', 'capnode-plugin-weather'], temp.home);
        expect(removed.code, removed.stderr).toBe(0);
        expect(removed.stdout).toMatch(/unloaded from the running host \(pid \d+\)/);
        await eventually(() => changes > seen, { what: 'tools/list_changed after plugins remove', timeoutMs: 20_000 });
        expect(await names()).not.toContain('weather.hello');
        expect((await client.callTool({ name: 'weather.hello', arguments: {} })).isError).toBe(true);
      } finally {
        await client.close();
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 180_000);

  it('plugins add <tarball> under a umask of 002 installs files the host accepts, into the running host at once', async () => {
    const packDir = mkdtempSync(join(tmpdir(), 'capnode-pack-'));
    using temp = tempHome();
    try {
      const fixture = fileURLToPath(new URL('./fixtures/package', import.meta.url));
      const packed = await run('npm', ['pack', fixture, '--pack-destination', packDir], packDir, offlineNpmEnv(join(packDir, 'npm-cache')));
      expect(packed.code, packed.stderr).toBe(0);
      const tarball = join(packDir, packed.stdout.trim().split('\n').pop()!);
      await using serve = await startServe(temp.home);
      const added = await run('sh', ['-c', 'umask 002 && exec "$0" "$@"', process.execPath, cliPath, 'plugins', 'add', tarball], packDir, {
        ...offlineNpmEnv(join(packDir, 'npm-cache')),
        CAPNODE_HOME: temp.home,
      });
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toMatch(/loaded into the running host \(pid \d+\): pkg\.hello/);
      const called = await runCli(['--command', 'pkg.hello', '--url', serve.url], temp.home);
      expect(called.stdout.trim()).toBe('hello from capnode-plugin-fixture');
    } finally {
      rmSync(packDir, { recursive: true, force: true });
    }
  }, 120_000);
});
