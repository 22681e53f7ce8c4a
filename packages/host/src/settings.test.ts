import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isHostError } from './errors.js';
import { createSettingsStore, defaultSettings, loadSettings } from './settings.js';

let home: string;
let path: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-settings-'));
  path = join(home, 'settings.json');
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function loadError(text: string): string {
  writeFileSync(path, text);
  try {
    loadSettings(path);
  } catch (error) {
    expect(isHostError(error) && error.code).toBe('invalid_settings');
    return (error as Error).message;
  }
  throw new Error('expected loadSettings to throw');
}

describe('settings', () => {
  it('has the documented defaults and treats a missing file as defaults', () => {
    expect(defaultSettings()).toEqual({
      mcp: { enabled: true, host: '127.0.0.1', port: 8765, maxConcurrency: 16 },
      node: { enabled: false },
      channel: { enabled: false },
      execApprovals: { mode: 'ask', allowlist: [] },
      approvals: { wait: 'auto', elicit: true, notify: true, progressIntervalMs: 5_000 },
    });
    expect(loadSettings(path)).toEqual(defaultSettings());
  });

  it('fills defaults into a partial file', () => {
    writeFileSync(path, JSON.stringify({ mcp: { port: 9000 } }));
    expect(loadSettings(path).mcp).toEqual({ enabled: true, host: '127.0.0.1', port: 9000, maxConcurrency: 16 });
  });

  it('names the file and the path of a bad value', () => {
    const message = loadError(JSON.stringify({ mcp: { port: 70000 } }));
    expect(message).toContain(path);
    expect(message).toContain('mcp.port');
    expect(loadError(JSON.stringify({ execApprovals: { mode: 'sometimes' } }))).toContain('execApprovals.mode');
    expect(loadError(JSON.stringify({ mcp: { host: '0.0.0.0' } }))).toContain('loopback');
    expect(loadError(JSON.stringify({ mpc: {} }))).toMatch(/mpc/);
  });

  it('reports invalid JSON with the parser message and never rewrites the file', async () => {
    const message = loadError('{ "mcp": ');
    expect(message).toContain(path);
    expect(message).toMatch(/not valid JSON/);
    expect(() => createSettingsStore(path)).toThrow(/not valid JSON/);
    expect(readFileSync(path, 'utf8')).toBe('{ "mcp": ');
  });

  it('updates atomically with mode 0600 and keeps edits made on disk meanwhile', async () => {
    const store = createSettingsStore(path);
    await store.execApprovals.set({ mode: 'allowlist', allowlist: ['git status*'] });
    expect(JSON.parse(readFileSync(path, 'utf8')).execApprovals).toEqual({ mode: 'allowlist', allowlist: ['git status*'] });
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);

    writeFileSync(path, JSON.stringify({ mcp: { port: 9100 }, execApprovals: { mode: 'allowlist', allowlist: ['git status*'] } }));
    await store.execApprovals.set({ mode: 'ask', allowlist: [] });
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    expect(saved.mcp.port).toBe(9100);
    expect(saved.execApprovals.mode).toBe('ask');
    expect(await store.execApprovals.get()).toEqual({ mode: 'ask', allowlist: [] });
  });

  it('refuses to write over a file that became invalid', async () => {
    const store = createSettingsStore(path);
    writeFileSync(path, '{ broken');
    await expect(store.execApprovals.set({ mode: 'full', allowlist: [] })).rejects.toThrow(/not valid JSON/);
    expect(readFileSync(path, 'utf8')).toBe('{ broken');
  });

  it('serializes concurrent updates', async () => {
    const store = createSettingsStore(path);
    await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) => store.update((settings) => ({ ...settings, execApprovals: { ...settings.execApprovals, allowlist: [...settings.execApprovals.allowlist, name] } }))),
    );
    expect(loadSettings(path).execApprovals.allowlist).toEqual(['a', 'b', 'c', 'd']);
  });
});
