import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isHostError } from '../errors.js';
import { createSettingsStore, defaultSettings, loadSettings } from './settings.js';
import { settingsLoadError } from '../../../../tests/support/settingsFile.js';

let home: string;
let path: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-settings-'));
  path = join(home, 'settings.json');
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const loadError = (text: string): string => settingsLoadError(path, text);

describe('settings', () => {
  it('has the documented defaults and treats a missing file as defaults', () => {
    expect(defaultSettings()).toEqual({
      mcp: { enabled: true, host: '127.0.0.1', port: 8765, maxConcurrency: 16, toolNames: 'dotted' },
      gateway: { enabled: false },
      channel: { enabled: false },
      openagent: { enabled: false, headers: {}, heartbeatMs: 15_000, servers: 'all' },
      execApprovals: { mode: 'ask', allowlist: [] },
      approvals: { wait: 'auto', elicit: true, notify: true, progressIntervalMs: 5_000, holdMs: 45_000 },
      dashboard: { enabled: true, port: 0 },
      consent: { screen: 'off', camera: 'off', microphone: 'off', location: 'off', files: 'off', computer: 'off', browser: 'off', allowed: [] },
      plugins: [],
      pluginSettings: {},
    });
    expect(loadSettings(path)).toEqual(defaultSettings());
  });

  it('fills defaults into a partial file', () => {
    writeFileSync(path, JSON.stringify({ mcp: { port: 9000 } }));
    expect(loadSettings(path).mcp).toEqual({ enabled: true, host: '127.0.0.1', port: 9000, maxConcurrency: 16, toolNames: 'dotted' });
  });

  it('names the file and the path of a bad value', () => {
    const message = loadError(JSON.stringify({ mcp: { port: 70000 } }));
    expect(message).toContain(path);
    expect(message).toContain('mcp.port');
    expect(loadError(JSON.stringify({ execApprovals: { mode: 'sometimes' } }))).toContain('execApprovals.mode');
    expect(loadError(JSON.stringify({ mcp: { host: '0.0.0.0' } }))).toContain('loopback');
    expect(loadError(JSON.stringify({ mpc: {} }))).toMatch(/mpc/);
  });

  it("mcp.toolNames takes 'dotted' or 'underscore' only, with an error naming both", () => {
    writeFileSync(path, JSON.stringify({ mcp: { toolNames: 'underscore' } }));
    expect(loadSettings(path).mcp.toolNames).toBe('underscore');
    for (const bad of ['snake', 'Underscore', 1, null]) {
      expect(loadError(JSON.stringify({ mcp: { toolNames: bad } }))).toContain("mcp.toolNames: must be 'dotted' or 'underscore'");
    }
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

  it('persists scoped exec allowlist entries next to old string entries; update applies to the policy on disk', async () => {
    writeFileSync(path, JSON.stringify({ execApprovals: { mode: 'ask', allowlist: ['git status*'] } }));
    const store = createSettingsStore(path);
    const scoped = { pattern: 'make test', cwd: '/home/me/repo', env: { CI: '1' } };
    await Promise.all([
      store.execApprovals.update!((policy) => ({ ...policy, allowlist: [...policy.allowlist, scoped] })),
      store.execApprovals.update!((policy) => ({ ...policy, mode: 'deny' })),
    ]);
    expect(JSON.parse(readFileSync(path, 'utf8')).execApprovals).toEqual({ mode: 'deny', allowlist: ['git status*', scoped] });
    expect(await store.execApprovals.get()).toEqual({ mode: 'deny', allowlist: ['git status*', scoped] });
    writeFileSync(path, JSON.stringify({ execApprovals: { allowlist: [{ pattern: 'git st*tus' }] } }));
    expect(() => createSettingsStore(path)).toThrow(/execApprovals\.allowlist\.0\.pattern: .*'\*' inside the argument/);
  });

  it('serializes concurrent updates', async () => {
    const store = createSettingsStore(path);
    await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) => store.update((settings) => ({ ...settings, execApprovals: { ...settings.execApprovals, allowlist: [...settings.execApprovals.allowlist, name] } }))),
    );
    expect(loadSettings(path).execApprovals.allowlist).toEqual(['a', 'b', 'c', 'd']);
  });

  describe.skipIf(process.platform === 'win32')('file attacks', () => {
    it('refuses a settings file that is a symlink to another file, and never writes through it', async () => {
      const target = join(home, 'elsewhere.json');
      writeFileSync(target, JSON.stringify({ mcp: { port: 9000 } }), { mode: 0o600 });
      symlinkSync(target, path);
      let failure: unknown;
      try {
        createSettingsStore(path);
      } catch (error) {
        failure = error;
      }
      expect(isHostError(failure) && failure.code).toBe('insecure_file');
      expect((failure as Error).message).toBe(`refusing to use the settings file ${path}: it is a symbolic link; replace it with a regular file (or remove it to have it recreated)`);
      expect(() => loadSettings(path)).toThrow(/symbolic link/);
      expect(readFileSync(target, 'utf8')).toBe(JSON.stringify({ mcp: { port: 9000 } }));
    });

    it('narrows a settings file others can read (0644: it may hold gateway.token) to 0600 and says so', () => {
      writeFileSync(path, JSON.stringify({ gateway: { token: 'gateway-secret' } }));
      chmodSync(path, 0o644);
      const warnings: string[] = [];
      const store = createSettingsStore(path, { onWarning: (message) => warnings.push(message) });
      expect(store.get().gateway.token).toBe('gateway-secret');
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(warnings).toEqual([`the settings file ${path} was accessible to other users (mode 0644); narrowed it to 0600`]);
      store.reload();
      expect(warnings).toHaveLength(1);
    });
  });

  it('consent and exec approvals see every change of the file: in place, same size, within a clock tick, after it aged, and a broken file', async () => {
    writeFileSync(path, JSON.stringify({ consent: { screen: 'ask' }, execApprovals: { mode: 'ask' } }), { mode: 0o600 });
    const store = createSettingsStore(path);
    expect((await store.consent.get()).screen).toBe('ask');
    // Same length, same inode, written at once: the timestamps may not have moved.
    writeFileSync(path, JSON.stringify({ consent: { screen: 'off' }, execApprovals: { mode: 'ask' } }));
    expect((await store.consent.get()).screen).toBe('off');
    // Once the file is older than the timestamp granularity the store keeps what it read; an edit in place still shows.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await store.consent.get()).screen).toBe('off');
    writeFileSync(path, JSON.stringify({ consent: { screen: 'allow' }, execApprovals: { mode: 'deny' } }));
    expect((await store.consent.get()).screen).toBe('allow');
    expect((await store.execApprovals.get()).mode).toBe('deny');
    writeFileSync(path, '{ broken');
    expect(() => store.consent.get()).toThrow(/not valid JSON/);
    expect(() => store.consent.get()).toThrow(/not valid JSON/);
    rmSync(path);
    expect((await store.consent.get()).screen).toBe('off');
  });

  it('consent: a bad mode names its path; grants are recorded once', async () => {
    writeFileSync(path, JSON.stringify({ consent: { screen: 'sometimes' } }));
    expect(() => loadSettings(path)).toThrow(/consent\.screen/);
    writeFileSync(path, JSON.stringify({ consent: { screen: 'ask' } }));
    const store = createSettingsStore(path);
    await store.consent.grant({ command: 'screen.snapshot', category: 'screen' });
    await store.consent.grant({ command: 'SCREEN.snapshot', category: 'screen' });
    expect((await store.consent.get()).allowed).toEqual([{ command: 'screen.snapshot', category: 'screen' }]);
    expect(JSON.parse(readFileSync(path, 'utf8')).consent.screen).toBe('ask');
  });
});

describe('settings: the old "node" section (now "gateway")', () => {
  const gateway = { enabled: true, url: 'ws://127.0.0.1:18789', token: 'gateway-secret' };

  it('reads "node" as "gateway", warns once naming the change, and migrate() rewrites the file as "gateway"', async () => {
    writeFileSync(path, JSON.stringify({ mcp: { port: 9000 }, node: gateway }), { mode: 0o600 });
    const warnings: string[] = [];
    const store = createSettingsStore(path, { onWarning: (message) => warnings.push(message) });
    expect(store.get().gateway).toEqual(gateway);
    expect(store.reload().gateway).toEqual(gateway);
    expect(warnings).toEqual([expect.stringContaining('the "node" section is now called "gateway"')]);
    expect(warnings[0]).toContain(path);
    // Reading never writes: the file changes only through migrate() (the host runs it) or an update.
    expect(JSON.parse(readFileSync(path, 'utf8')).node).toEqual(gateway);
    expect(await store.migrate()).toBe(true);
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    expect(saved.gateway).toEqual(gateway);
    expect(saved.node).toBeUndefined();
    expect(saved.mcp.port).toBe(9000);
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await store.migrate()).toBe(false);
    expect(store.reload().gateway).toEqual(gateway);
    expect(warnings).toHaveLength(1);
  });

  it('with both sections "gateway" wins, with a warning; the rewrite drops "node"', async () => {
    writeFileSync(path, JSON.stringify({ node: { enabled: true, url: 'ws://old.example:1' }, gateway: { url: 'ws://new.example:2' } }), { mode: 0o600 });
    const warnings: string[] = [];
    const store = createSettingsStore(path, { onWarning: (message) => warnings.push(message) });
    expect(store.get().gateway).toEqual({ enabled: false, url: 'ws://new.example:2' });
    expect(warnings).toEqual([expect.stringMatching(/both "gateway" and the old "node" section: "gateway" is used/)]);
    expect(await store.migrate()).toBe(true);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ gateway: { url: 'ws://new.example:2' } });
  });

  it('a bad old value gives the same clear error, named under "gateway."', () => {
    const badUrl = loadError(JSON.stringify({ node: { enabled: true, url: 'http://127.0.0.1:1' } }));
    expect(badUrl).toContain(path);
    expect(badUrl).toContain('gateway.url: must be a ws:// or wss:// URL');
    expect(badUrl).not.toContain('node.');
    expect(loadError(JSON.stringify({ node: { enabled: 'yes' } }))).toMatch(/gateway\.enabled: /);
    expect(loadError(JSON.stringify({ node: { tokn: 'x' } }))).toMatch(/gateway: .*tokn/);
    expect(loadError(JSON.stringify({ node: 'on' }))).toMatch(/gateway: /);
  });

  it('an update writes the "gateway" form too, and migrate() leaves an invalid file alone', async () => {
    writeFileSync(path, JSON.stringify({ node: gateway }));
    const store = createSettingsStore(path);
    await store.execApprovals.set({ mode: 'full', allowlist: [] });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ gateway, execApprovals: { mode: 'full' } });
    writeFileSync(path, JSON.stringify({ node: { url: 'http://x' } }));
    await expect(store.migrate()).rejects.toThrow(/gateway\.url/);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ node: { url: 'http://x' } });
  });
});

describe('settings: writes keep the file sparse', () => {
  it('writes only what changed: defaults the user never set stay out, unknown-to-the-user values keep following the defaults', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-sparse-'));
    const file = join(dir, 'settings.json');
    writeFileSync(file, JSON.stringify({ mcp: { port: 9000 } }), { mode: 0o600 });
    const store = createSettingsStore(file);
    await store.update((settings) => ({ ...settings, consent: { ...settings.consent, files: 'ask' } }));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcp: { port: 9000 }, consent: { files: 'ask' } });
    await store.update((settings) => ({ ...settings, mcp: { ...settings.mcp, port: 8765 } }));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcp: { port: 8765 }, consent: { files: 'ask' } });
    expect(store.get().mcp.host).toBe('127.0.0.1');
    rmSync(dir, { recursive: true, force: true });
  });
});
