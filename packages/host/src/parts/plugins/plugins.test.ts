import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistry, type PluginExport } from '@capnode/capabilities';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPluginManager } from './plugins.js';
import { createAvailabilityGate } from '../pipeline/pluginsAvailability.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-plugins-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('plugin manager', () => {
  it('probes every plugin at once (a probe waiting on a later plugin still answers), yet registers them in order', async () => {
    let laterProbeStarted!: () => void;
    const started = new Promise<void>((resolve) => (laterProbeStarted = resolve));
    const execute = () => 'ok';
    // Loaded one after another, `first`'s probe would wait out its deadline: `second` had not started.
    const first: PluginExport = {
      category: 'first',
      commands: [
        { name: 'first.look', description: '', availability: async () => (await started, { available: true }), execute },
        { name: 'shared.look', description: 'first', execute },
      ],
    };
    const second: PluginExport = {
      category: 'second',
      commands: [
        { name: 'second.look', description: '', availability: () => (laterProbeStarted(), { available: true }), execute },
        { name: 'shared.look', description: 'second', execute },
      ],
    };
    const registry = createRegistry();
    const logs: string[] = [];
    const plugins = createPluginManager({
      registry,
      availability: createAvailabilityGate(),
      home,
      pluginSettings: () => ({}),
      log: (level, message) => logs.push(`${level}: ${message}`),
      builtins: [
        { name: 'first', plugin: first },
        { name: 'second', plugin: second },
      ],
      availabilityTimeoutMs: 5_000,
    });
    await plugins.ready();
    const [a, b] = plugins.status();
    expect(a).toMatchObject({ name: 'first', state: 'loaded', commands: ['first.look', 'shared.look'], unavailable: [] });
    // Its probe answered first, but the plugin configured first keeps the shared name.
    expect(b).toMatchObject({ name: 'second', state: 'failed' });
    expect(b!.error).toContain("'shared.look', which plugin 'first' already defines");
    expect(registry.resolve('shared.look')?.definition.description).toBe('first');
    await plugins.close();
  });
});
