import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliPath, completion, repoRoot, runCli, startServe, tempHome } from '../cli/helpers.js';
import { spawn } from 'node:child_process';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const settingsOf = (home: string) => JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as { plugins: string[]; consent: Record<string, unknown> };

describe('capnode plugins', () => {
  it('add <tarball> installs the package into <config dir>/plugins with npm; the host loads it; list and remove', async () => {
    using temp = tempHome();
    const packDir = mkdtempSync(join(tmpdir(), 'capnode-pack-'));
    try {
      const tarball = join(packDir, execFileSync('npm', ['pack', fixture('package'), '--pack-destination', packDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').pop()!);
      const added = await runCli(['plugins', 'add', tarball], temp.home);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain('added: plugin capnode-plugin-fixture (package, capnode-plugin-fixture)');
      expect(existsSync(join(temp.home, 'plugins', 'node_modules', 'capnode-plugin-fixture', 'lib', 'main.js'))).toBe(true);
      expect(settingsOf(temp.home).plugins).toEqual(['capnode-plugin-fixture']);

      const file = await runCli(['plugins', 'add', fixture('filePlugin.mjs')], temp.home);
      expect(file.code, file.stderr).toBe(0);
      const listed = await runCli(['plugins', 'list', '--json'], temp.home);
      expect(JSON.parse(listed.stdout).plugins).toEqual([
        { source: 'capnode-plugin-fixture', name: 'capnode-plugin-fixture', kind: 'package' },
        { source: fixture('filePlugin.mjs'), name: 'filePlugin', kind: 'file' },
      ]);

      {
        await using serve = await startServe(temp.home);
        const called = await runCli(['--command', 'pkg.hello', '--url', serve.url], temp.home);
        expect(called.stdout.trim()).toBe('hello from capnode-plugin-fixture');
        const status = await runCli(['status', '--json', '--url', serve.url], temp.home);
        const plugins = JSON.parse(status.stdout).plugins as { name: string; state: string }[];
        expect(plugins.filter((plugin) => plugin.name !== undefined && !plugin.name.startsWith('builtin')).map(({ name, state }) => ({ name, state }))).toEqual(
          expect.arrayContaining([{ name: 'capnode-plugin-fixture', state: 'loaded' }, { name: 'filePlugin', state: 'loaded' }]),
        );
      }

      const removed = await runCli(['plugins', 'remove', 'capnode-plugin-fixture'], temp.home);
      expect(removed.code, removed.stderr).toBe(0);
      expect(existsSync(join(temp.home, 'plugins', 'node_modules', 'capnode-plugin-fixture'))).toBe(false);
      expect(settingsOf(temp.home).plugins).toEqual([fixture('filePlugin.mjs')]);
      expect((await runCli(['plugins', 'remove', 'filePlugin'], temp.home)).code).toBe(0);
      expect(settingsOf(temp.home).plugins).toEqual([]);
    } finally {
      rmSync(packDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('add refuses a relative path, a missing path and a bad name, writing nothing', async () => {
    using temp = tempHome();
    const relative = await runCli(['plugins', 'add', './plugin.mjs'], temp.home);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('a plugin path must be absolute: capnode plugins add /');
    const missing = await runCli(['plugins', 'add', '/nonexistent/plugin.mjs'], temp.home);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/plugin.mjs does not exist');
    const bad = await runCli(['plugins', 'add', 'Not A Name'], temp.home);
    expect(bad.code).toBe(2);
    expect(existsSync(join(temp.home, 'settings.json'))).toBe(false);
    const unknown = await runCli(['plugins', 'remove', 'nothing'], temp.home);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no plugin 'nothing' is configured");
  });

  it('new <name> creates a plugin project whose own test runs it through a real host over MCP', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'capnode-new-'));
    using temp = tempHome();
    try {
      const child = spawn(process.execPath, [cliPath, 'plugins', 'new', 'capnode-plugin-weather'], { cwd: parent, env: { ...process.env, CAPNODE_HOME: temp.home } });
      child.stdin.end();
      const created = await completion(child);
      expect(created.code, created.stderr).toBe(0);
      const project = join(parent, 'capnode-plugin-weather');
      const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
      expect(manifest).toMatchObject({ name: 'capnode-plugin-weather', type: 'module', scripts: { test: 'node --test test/' } });
      expect(readFileSync(join(project, 'index.js'), 'utf8')).toContain("export default definePlugin(");
      expect(readFileSync(join(project, 'README.md'), 'utf8')).toContain('capnode serve --dev-plugin');
      // What `npm install` gives the author (the peer dependency), from this checkout.
      mkdirSync(join(project, 'node_modules', '@capnode'), { recursive: true });
      symlinkSync(join(repoRoot, 'packages', 'capabilities'), join(project, 'node_modules', '@capnode', 'capabilities'));
      const tested = spawn(process.execPath, ['--test', 'test/'], { cwd: project, env: { ...process.env, CAPNODE_BIN: cliPath, CAPNODE_HOME: '', CAPNODE_URL: '' } });
      tested.stdin.end();
      const result = await completion(tested);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(/# pass 1/);
      // An existing folder is never overwritten.
      const again = spawn(process.execPath, [cliPath, 'plugins', 'new', 'capnode-plugin-weather'], { cwd: parent, env: { ...process.env, CAPNODE_HOME: temp.home } });
      again.stdin.end();
      expect((await completion(again)).code).toBe(1);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('capnode serve with a plugin whose import never settles', () => {
  it('reports the plugin failed after the load timeout and serves on (it used to exit 0 silently)', async () => {
    using temp = tempHome();
    expect((await runCli(['plugins', 'add', fixture('hangsAtImport.mjs')], temp.home)).code).toBe(0);
    const serve = await startServe(temp.home, ['--port', '0'], 30_000);
    try {
      expect(serve.stderr()).toMatch(/plugin hangsAtImport.*did not load within 10000 ms/s);
      const listed = await runCli(['status', '--json'], temp.home);
      const plugins = (JSON.parse(listed.stdout) as { plugins: { name: string; state: string }[] }).plugins;
      expect(plugins.find((plugin) => plugin.name === 'hangsAtImport')?.state).toBe('failed');
    } finally {
      await serve.stop();
    }
  }, 60_000);
});

describe('capnode consent', () => {
  it('set and list; bad categories and modes are usage errors that write nothing', async () => {
    using temp = tempHome();
    const listed = await runCli(['consent', 'list'], temp.home);
    expect(listed.stdout).toMatch(/^screen +off +refused/m);
    expect(listed.stdout).toMatch(/^location +off/m);
    const set = await runCli(['consent', 'set', 'camera', 'ask'], temp.home);
    expect(set.code, set.stderr).toBe(0);
    // Sparse writes: only the category that changed is in the file.
    expect(settingsOf(temp.home).consent).toEqual({ camera: 'ask' });
    const json = await runCli(['consent', 'list', '--json'], temp.home);
    expect(JSON.parse(json.stdout)).toEqual({ screen: 'off', camera: 'ask', microphone: 'off', location: 'off', files: 'off', computer: 'off', browser: 'off', allowed: [] });
    const before = readFileSync(join(temp.home, 'settings.json'), 'utf8');
    expect((await runCli(['consent', 'set', 'keyboard', 'allow'], temp.home)).code).toBe(2);
    expect((await runCli(['consent', 'set', 'screen', 'always'], temp.home)).code).toBe(2);
    expect((await runCli(['consent', 'set', 'screen'], temp.home)).code).toBe(2);
    expect(readFileSync(join(temp.home, 'settings.json'), 'utf8')).toBe(before);
  });
});
