import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../cli/helpers.js';
import { completion } from '../support/process.js';

const writerScript = fileURLToPath(new URL('./fixtures/settingsWriter.mjs', import.meta.url));
const filePlugin = fileURLToPath(new URL('../plugins/fixtures/filePlugin.mjs', import.meta.url));

const WRITERS = 6;
const UPDATES = 40;

interface SettingsOnDisk {
  readonly plugins: string[];
  readonly pluginSettings: Record<string, Record<string, number>>;
  readonly consent: Record<string, unknown>;
}
const settingsOf = (home: string) => JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as SettingsOnDisk;

/** Nothing but settings.json is left in `home` (no lock, no temporary or stale-aside file). */
const leftovers = (home: string) => readdirSync(home).filter((name) => name.startsWith('settings.json.'));

describe('settings.json updates across processes', () => {
  it(`${WRITERS} processes doing ${UPDATES} updates each at once lose none of them`, async () => {
    using temp = tempHome();
    const path = join(temp.home, 'settings.json');
    const writers = Array.from({ length: WRITERS }, (_, index) => spawn(process.execPath, [writerScript, path, `w${index}`, String(UPDATES)], { stdio: 'pipe' }));
    const results = writers.map((child) => completion(child));
    // Start them together: each says "ready" once @capnode/host is loaded.
    await Promise.all(writers.map((child) => new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))));
    for (const child of writers) child.stdin.end('go\n');
    for (const result of await Promise.all(results)) expect(result.code, result.stderr).toBe(0);

    const written = settingsOf(temp.home).pluginSettings;
    const expected = Object.fromEntries(Array.from({ length: UPDATES }, (_, index) => [`k${index}`, index]));
    for (let index = 0; index < WRITERS; index += 1) expect(written[`w${index}`], `writer w${index}`).toEqual(expected);
    expect(leftovers(temp.home)).toEqual([]);
  }, 120_000);

  it('concurrent capnode plugins add and consent set commands all land in settings.json', async () => {
    using temp = tempHome();
    const pluginDir = mkdtempSync(join(tmpdir(), 'capnode-lock-plugins-'));
    try {
      const plugins = Array.from({ length: 5 }, (_, index) => {
        const file = join(pluginDir, `lockPlugin${index}.mjs`);
        copyFileSync(filePlugin, file);
        return file;
      });
      const runs = [
        ...plugins.map((file) => runCli(['plugins', 'add', file], temp.home)),
        runCli(['consent', 'set', 'screen', 'ask'], temp.home),
        runCli(['consent', 'set', 'camera', 'allow'], temp.home),
        runCli(['consent', 'set', 'location', 'ask'], temp.home),
      ];
      for (const result of await Promise.all(runs)) expect(result.code, result.stderr).toBe(0);
      const settings = settingsOf(temp.home);
      expect([...settings.plugins].sort()).toEqual([...plugins].sort());
      expect(settings.consent).toMatchObject({ screen: 'ask', camera: 'allow', location: 'ask' });
      expect(settings.consent.microphone).toBeUndefined();
      expect(existsSync(join(temp.home, 'settings.json.lock'))).toBe(false);
    } finally {
      rmSync(pluginDir, { recursive: true, force: true });
    }
  }, 120_000);
});
