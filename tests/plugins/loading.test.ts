import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTestHost } from '../support/testHost.js';
import { eventually } from '../support/poll.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function failureCode(result: unknown): string | undefined {
  return ((result as { _meta?: Record<string, { code?: string }> })._meta?.['capnode/failure'])?.code;
}

describe('plugins listed in settings.json', () => {
  it('loads a file plugin and a function plugin with its context; unavailable commands stay listed, local-only, failing with unavailable', async () => {
    await using t = await startTestHost({
      settings: { plugins: [fixture('filePlugin.mjs'), fixture('contextPlugin.mjs')], pluginSettings: { contextPlugin: { greeting: 'Howdy' } } },
      host: { builtinPlugins: false, availabilityTimeoutMs: 300 },
    });
    const names = (await t.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['fixture.echo', 'ctx.greet', 'ctx.gone', 'ctx.slowprobe', 'ctx.peek']));
    expect((await t.call('fixture.echo', { a: 1 })).text).toBe('{"a":1}');
    expect((await t.call('ctx.greet', { name: 'Ann' })).text).toBe('Howdy, Ann! data:true');
    expect(existsSync(join(t.home, 'plugins-data', 'contextPlugin', 'loaded.txt'))).toBe(true);
    expect(t.logs).toContain('info: plugin contextPlugin: loading with greeting Howdy');

    const gone = await t.client.callTool({ name: 'ctx.gone', arguments: {} });
    expect(gone.isError).toBe(true);
    expect(failureCode(gone)).toBe('unavailable');
    expect((gone.content as { text: string }[])[0]!.text).toBe('unavailable here: install the frobnicator (apt install frobnicator)');
    // Never declared to a gateway.
    const declared = t.host.registry.commands({ excludeLocalOnly: true }).map((command) => command.name);
    expect(declared).not.toContain('ctx.gone');
    expect(declared).not.toContain('ctx.slowprobe');
    expect(declared).toContain('ctx.greet');

    const status = t.host.status().plugins;
    expect(status.map(({ name, kind, state }) => ({ name, kind, state }))).toEqual([
      { name: 'filePlugin', kind: 'file', state: 'loaded' },
      { name: 'contextPlugin', kind: 'file', state: 'loaded' },
    ]);
    expect(status[1]!.commands).toEqual(['ctx.greet', 'ctx.gone', 'ctx.slowprobe', 'ctx.peek']);
    expect(status[1]!.unavailable.map((entry) => entry.command)).toEqual(['ctx.gone', 'ctx.slowprobe']);
    expect(status[1]!.unavailable[1]!.install).toMatch(/did not answer within 300 ms/);

    // Consent applies to plugin commands: screen is off by default.
    const peek = await t.client.callTool({ name: 'ctx.peek', arguments: {} });
    expect(failureCode(peek)).toBe('consent_required');

    await t.host.close();
    expect(readFileSync(join(t.home, 'plugins-data', 'contextPlugin', 'aborted.txt'), 'utf8')).toBe('the host is closing');
  }, 30_000);

  it('broken plugins (syntax error, throws, hangs, garbage, no default export, not installed, relative) are diagnostics, never a host failure', async () => {
    await using t = await startTestHost({
      settings: {
        plugins: [
          fixture('syntaxError.mjs'),
          fixture('throws.mjs'),
          fixture('importThrows.mjs'),
          fixture('selfDuplicate.mjs'),
          fixture('hangs.mjs'),
          fixture('garbage.mjs'),
          fixture('noDefault.mjs'),
          fixture('missing.mjs'),
          'capnode-plugin-not-installed',
          'relative/path.mjs',
          fixture('filePlugin.mjs'),
        ],
      },
      host: { builtinPlugins: false, pluginLoadTimeoutMs: 500 },
    });
    const byName = Object.fromEntries(t.host.status().plugins.map((plugin) => [plugin.name, plugin]));
    expect(byName.syntaxError).toMatchObject({ state: 'failed', error: expect.stringMatching(/syntax|Unexpected/i) });
    expect(byName.throws).toMatchObject({ state: 'failed', error: 'Error: the plugin refuses to start' });
    expect(byName.importThrows).toMatchObject({ state: 'failed', error: 'TypeError: broken at import' });
    expect(byName.selfDuplicate).toMatchObject({ state: 'failed', error: "plugin 'selfDuplicate' defines command 'Twice.X' twice" });
    expect(t.host.registry.resolve('twice.x')).toBeUndefined();
    expect(byName.hangs).toMatchObject({ state: 'failed', error: expect.stringContaining('did not load within 500 ms') });
    expect(byName.garbage).toMatchObject({ state: 'failed', error: expect.stringContaining("command 'junk.x' has no description") });
    expect(byName.noDefault).toMatchObject({ state: 'failed', error: expect.stringContaining('has no default export') });
    expect(byName.missing).toMatchObject({ state: 'failed', error: expect.stringContaining('does not exist') });
    expect(byName['capnode-plugin-not-installed']).toMatchObject({ state: 'failed', error: expect.stringContaining('capnode plugins add capnode-plugin-not-installed') });
    expect(byName['relative/path.mjs']).toMatchObject({ state: 'failed', error: expect.stringContaining('neither an absolute path nor a package name') });
    expect(byName.filePlugin).toMatchObject({ state: 'loaded', commands: ['fixture.echo'] });
    // The host serves on: built-ins and the good plugin answer.
    expect((await t.call('fixture.echo', {})).text).toBe('{}');
    expect((await t.call('device.info', {})).isError).toBe(false);
    expect(t.logs.some((line) => line.startsWith('warning: plugin throws') && line.includes('failed to load'))).toBe(true);
    // app.status (capnode status) carries the diagnostics.
    const app = await t.call('app.status', {});
    expect((app.structured?.plugins as { name: string; state: string }[]).find((plugin) => plugin.name === 'hangs')?.state).toBe('failed');
  }, 30_000);

  it('refuses a duplicate command name, naming both definers', async () => {
    await using t = await startTestHost({
      settings: { plugins: [fixture('filePlugin.mjs'), fixture('duplicateOfFile.mjs'), fixture('duplicateBuiltin.mjs')] },
      host: { builtinPlugins: false },
    });
    const [, second, third] = t.host.status().plugins;
    expect(second).toMatchObject({ state: 'failed', commands: [] });
    expect(second!.error).toBe("plugin 'duplicateOfFile' defines command 'FIXTURE.echo', which plugin 'filePlugin' already defines; 'duplicateOfFile' was not loaded (rename the command or remove one of them)");
    expect(third!.error).toContain("plugin 'duplicateBuiltin' defines command 'device.info', which the host's built-in commands already define");
    expect((await t.call('fixture.echo', { x: 1 })).text).toBe('{"x":1}');
    expect((await t.call('device.info', {})).text).not.toBe('mine');
  });

  it("refuses a command whose underscore spelling is another tool's, naming both", async () => {
    await using t = await startTestHost({
      settings: { mcp: { toolNames: 'underscore' }, plugins: [fixture('filePlugin.mjs'), fixture('underscoreCollision.mjs'), fixture('underscoreCollisionDotted.mjs')] },
    });
    const [, clash, clash2] = t.host.status().plugins.filter((entry) => entry.kind === 'file');
    expect(clash).toMatchObject({ state: 'failed', commands: [] });
    expect(clash!.error).toBe(
      "plugin 'underscoreCollision' defines command 'system_run', which the host's built-in commands already define as 'system.run' (both are 'system_run' in underscore spelling); 'underscoreCollision' was not loaded (rename the command or remove one of them)",
    );
    expect(clash2!.error).toContain("command 'fixture_echo', which plugin 'filePlugin' already defines as 'fixture.echo'");
    // Both spellings still reach the one command, and the listing has each tool once.
    expect((await t.call('fixture_echo', { x: 1 })).text).toBe('{"x":1}');
    const names = (await t.client.listTools()).tools.map((tool) => tool.name);
    expect(names.filter((name) => name === 'system_run' || name === 'fixture_echo')).toEqual(['system_run', 'fixture_echo']);
  });

  it('built-in (pack) plugins load first and are reported; a built-in plugin cannot take a host command', async () => {
    await using t = await startTestHost({
      host: {
        builtinPlugins: [
          { name: 'packish', plugin: () => ({ category: 'packish', commands: [{ name: 'packish.ping', description: 'ping', execute: () => 'pong' }] }) },
          { name: 'clash', plugin: { category: 'clash', commands: [{ name: 'system.run', description: 'no', execute: () => 'no' }] } },
        ],
      },
    });
    await eventually(() => t.host.status().plugins.length === 2);
    expect(t.host.status().plugins.map(({ name, kind, state, source }) => ({ name, kind, state, source }))).toEqual([
      { name: 'packish', kind: 'builtin', state: 'loaded', source: 'builtin:packish' },
      { name: 'clash', kind: 'builtin', state: 'failed', source: 'builtin:clash' },
    ]);
    expect((await t.call('packish.ping', {})).text).toBe('pong');
  });
});
