import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isPackageName, packageEntry, pluginDataName, resolvePluginSource, toCapabilities } from './pluginsLoad.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'capnode-plugins-load-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function pkg(path: string, manifest: Record<string, unknown>, files: Record<string, string> = {}): string {
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, 'package.json'), JSON.stringify(manifest));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(path, name, '..'), { recursive: true });
    writeFileSync(join(path, name), text);
  }
  return path;
}

describe('plugin sources', () => {
  it('package names: plain and scoped; never a path in disguise', () => {
    for (const name of ['weather', '@acme/weather', 'capnode-plugin-x.y_z~1']) expect(isPackageName(name)).toBe(true);
    for (const name of ['../x', '@acme/../x', 'a/b', '/abs', 'has space', '', '@acme', '..', 'C:\\x']) expect(isPackageName(name)).toBe(false);
    expect(pluginDataName('@acme/weather')).toBe('@acme+weather');
  });

  it('resolves the entry from exports (import, node, default conditions), then main, then index.js', () => {
    expect(packageEntry(pkg(join(dir, 'a'), { name: 'a', exports: { '.': { require: './c.cjs', import: './m.js' } } }, { 'm.js': '' })).file).toBe(join(dir, 'a', 'm.js'));
    expect(packageEntry(pkg(join(dir, 'b'), { name: 'b', exports: './x/e.js' }, { 'x/e.js': '' })).file).toBe(join(dir, 'b', 'x', 'e.js'));
    expect(packageEntry(pkg(join(dir, 'c'), { name: 'c', main: 'lib.js' }, { 'lib.js': '' })).file).toBe(join(dir, 'c', 'lib.js'));
    expect(packageEntry(pkg(join(dir, 'd'), {}, { 'index.js': '' }))).toEqual({ name: 'd', file: join(dir, 'd', 'index.js') });
  });

  it('refuses an entry outside the package or missing, and an unreadable package.json', () => {
    writeFileSync(join(dir, 'outside.js'), '');
    expect(() => packageEntry(pkg(join(dir, 'e'), { exports: '../outside.js' }))).toThrow(/outside the package/);
    expect(() => packageEntry(pkg(join(dir, 'f'), { main: 'nope.js' }))).toThrow(/does not exist/);
    mkdirSync(join(dir, 'g'));
    writeFileSync(join(dir, 'g', 'package.json'), '{ not json');
    expect(() => packageEntry(join(dir, 'g'))).toThrow(/cannot read/);
  });

  it('resolves installed packages from <plugins>/node_modules, files and folders by absolute path', () => {
    const plugins = join(dir, 'plugins');
    pkg(join(plugins, 'node_modules', '@acme', 'weather'), { name: '@acme/weather', exports: './w.js' }, { 'w.js': '' });
    expect(resolvePluginSource('@acme/weather', plugins)).toEqual({ name: '@acme/weather', kind: 'package', file: join(plugins, 'node_modules', '@acme', 'weather', 'w.js') });
    expect(() => resolvePluginSource('other', plugins)).toThrow(/not installed in .*capnode plugins add other/);
    writeFileSync(join(dir, 'one.mjs'), '');
    expect(resolvePluginSource(join(dir, 'one.mjs'), plugins)).toEqual({ name: 'one', kind: 'file', file: join(dir, 'one.mjs') });
    pkg(join(dir, 'folder'), { name: 'folder-plugin' }, { 'index.js': '' });
    expect(resolvePluginSource(join(dir, 'folder'), plugins)).toMatchObject({ name: 'folder-plugin', kind: 'file' });
    expect(() => resolvePluginSource('./rel.mjs', plugins)).toThrow(/neither an absolute path nor a package name/);
  });

  it('checks the shape of what a plugin gives', () => {
    const ok = { category: 'a', commands: [{ name: 'a.b', description: '', execute: () => '' }] };
    expect(toCapabilities(ok, 'x')).toEqual([ok]);
    expect(toCapabilities([ok, ok], 'x')).toHaveLength(2);
    expect(() => toCapabilities(null, 'x')).toThrow(/x is null/);
    expect(() => toCapabilities(42, 'x')).toThrow(/x is number/);
    expect(() => toCapabilities({ commands: [] }, 'x')).toThrow(/no category/);
    expect(() => toCapabilities({ category: 'a' }, 'x')).toThrow(/no commands array/);
    expect(() => toCapabilities({ category: 'a', commands: [{ name: 'a.b', description: '', execute: () => '', input: {} }] }, 'x')).toThrow(/not a zod schema/);
    expect(() => toCapabilities([ok, 'nope'], 'x')).toThrow(/entry 1 of x/);
  });
});
