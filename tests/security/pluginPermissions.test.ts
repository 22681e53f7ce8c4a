import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestHost, tempDir } from '../support/testHost.js';

const isRoot = process.getuid?.() === 0;
/** The uid of `nobody` on Linux (and the usual overflow uid): another user than the one running the host. */
const NOBODY = 65534;

/** A plugin module in `dir` (mode 0644) whose import leaves `<name>.imported` beside it: a refused plugin must never be imported. */
function pluginFile(dir: string, name: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(
    file,
    `import { writeFileSync } from 'node:fs';
writeFileSync(new URL('./${name}.imported', import.meta.url), 'imported');
export default { category: '${name}', commands: [{ name: '${name}.ping', description: 'x', execute: () => 'pong ${name}' }] };
`,
    { mode: 0o644 },
  );
  chmodSync(file, 0o644);
  return file;
}

/** A plugin package folder (0755, files 0644). */
function pluginPackage(dir: string, name: string): string {
  const folder = join(dir, name);
  mkdirSync(folder, { mode: 0o755 });
  chmodSync(folder, 0o755);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, type: 'module', exports: './index.mjs' }), { mode: 0o644 });
  pluginFile(folder, 'index');
  return folder;
}

/** A folder with `mode` in `dir`. */
function folder(dir: string, name: string, mode: number): string {
  const path = join(dir, name);
  mkdirSync(path);
  chmodSync(path, mode);
  return path;
}

describe.skipIf(process.platform === 'win32')('plugins other users could change are refused before their import (real host, SDK v2 client)', () => {
  it('a g+w file, an o+w folder, a file in an o+w folder without the sticky bit and a file of another uid fail with the fix; 0644/0755 and a sticky folder load', async () => {
    using dir = tempDir();
    chmodSync(dir.path, 0o755);
    const groupWritable = pluginFile(dir.path, 'gw');
    chmodSync(groupWritable, 0o664);
    const openPackage = pluginPackage(dir.path, 'openpkg');
    chmodSync(openPackage, 0o757);
    const openFolder = folder(dir.path, 'open', 0o777);
    const inOpenFolder = pluginFile(openFolder, 'inopen');
    const sticky = folder(dir.path, 'sticky', 0o1777);
    const inSticky = pluginFile(sticky, 'insticky');
    const control = pluginFile(dir.path, 'control');
    const controlPackage = pluginPackage(dir.path, 'controlpkg');
    const foreign = pluginFile(dir.path, 'foreign');
    if (isRoot) chownSync(foreign, NOBODY, NOBODY);

    const sources = [groupWritable, openPackage, inOpenFolder, inSticky, control, controlPackage, ...(isRoot ? [foreign] : [])];
    await using t = await startTestHost({ settings: { plugins: sources }, host: { builtinPlugins: false } });
    await t.host.pluginsReady();
    const byName = new Map(t.host.status().plugins.map((plugin) => [plugin.name, plugin]));

    expect(byName.get('gw')).toMatchObject({ state: 'failed' });
    expect(byName.get('gw')!.error).toBe(`plugin file ${groupWritable} is writable by group (mode 0664): they could change the code capnode runs; fix: chmod go-w ${groupWritable}`);
    expect(byName.get('openpkg')).toMatchObject({ state: 'failed' });
    expect(byName.get('openpkg')!.error).toContain(`plugin folder ${openPackage} is writable by others (mode 0757)`);
    expect(byName.get('openpkg')!.error).toContain(`fix: chmod go-w ${openPackage}`);
    expect(byName.get('inopen')).toMatchObject({ state: 'failed' });
    expect(byName.get('inopen')!.error).toContain(`the folder ${openFolder}, which holds a plugin, is writable by group and others without the sticky bit (mode 0777)`);
    expect(byName.get('inopen')!.error).toContain(`fix: chmod go-w ${openFolder} (or chmod +t ${openFolder})`);
    if (isRoot) {
      expect(byName.get('foreign')).toMatchObject({ state: 'failed' });
      expect(byName.get('foreign')!.error).toMatch(new RegExp(`^plugin file ${foreign} is owned by uid ${NOBODY}, not by you: .*fix: chown \\S+ ${foreign}`));
    }
    // Refused before the import: their code never ran.
    for (const file of [groupWritable, join(openPackage, 'index.mjs'), inOpenFolder, foreign]) expect(existsSync(file.replace(/\.mjs$/, '.imported')), file).toBe(false);

    // The controls load and answer.
    for (const name of ['insticky', 'control', 'controlpkg']) expect(byName.get(name)?.state, `${name}: ${byName.get(name)?.error}`).toBe('loaded');
    for (const name of ['insticky', 'control', 'index']) {
      const result = await t.call(`${name}.ping`, {});
      expect(result.isError, result.text).toBeFalsy();
    }
    expect((await t.call('gw.ping', {})).isError).toBe(true);
  });

  it('after the fix, the admin sync (what capnode plugins add calls) loads the failed plugin; a PATCH of plugins unloads one live', async () => {
    using dir = tempDir();
    chmodSync(dir.path, 0o755);
    const writable = pluginFile(dir.path, 'fixme');
    chmodSync(writable, 0o666);
    const control = pluginFile(dir.path, 'kept');
    await using t = await startTestHost({ settings: { plugins: [writable, control] }, host: { builtinPlugins: false } });
    expect(t.host.status().plugins.map((plugin) => plugin.state)).toEqual(['failed', 'loaded']);
    expect(t.host.status().plugins[0]!.error).toContain(`fix: chmod go-w ${writable}`);

    chmodSync(writable, 0o644);
    const token = readFileSync(join(t.home, 'admin-token'), 'utf8').trim();
    const synced = await fetch(new URL('/_capnode/plugins/sync', t.url), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(synced.status).toBe(200);
    const { plugins } = (await synced.json()) as { plugins: { name: string; state: string }[] };
    expect(plugins.map(({ name, state }) => ({ name, state }))).toEqual([
      { name: 'fixme', state: 'loaded' },
      { name: 'kept', state: 'loaded' },
    ]);
    expect((await t.call('fixme.ping', {})).text).toBe('pong fixme');
    // The MCP token is not the admin token: an agent cannot load plugins.
    const mcpToken = readFileSync(join(t.home, 'mcp-token'), 'utf8').trim();
    expect((await fetch(new URL('/_capnode/plugins/sync', t.url), { method: 'POST', headers: { authorization: `Bearer ${mcpToken}` } })).status).toBe(401);

    const patched = await t.host.patchSettings({ plugins: [writable] });
    expect(patched.ok && patched.applied).toEqual(['plugins']);
    expect(t.host.status().plugins.map((plugin) => plugin.name)).toEqual(['fixme']);
    expect((await t.call('kept.ping', {})).isError).toBe(true);
  });
});
