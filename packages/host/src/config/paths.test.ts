import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultMcpUrl, formatUrl, hostPaths, readRuntimeState, resolveHome } from './paths.js';

describe('resolveHome', () => {
  it('prefers an explicit home, then CAPNODE_HOME', () => {
    expect(resolveHome({ home: '/a', env: { CAPNODE_HOME: '/b' } })).toBe('/a');
    expect(resolveHome({ env: { CAPNODE_HOME: '/b', XDG_CONFIG_HOME: '/x' } })).toBe('/b');
  });

  it('uses the platform default otherwise', () => {
    expect(resolveHome({ env: {}, platform: 'linux', userHome: '/home/u' })).toBe(join('/home/u', '.config', 'capnode'));
    expect(resolveHome({ env: { XDG_CONFIG_HOME: '/xdg' }, platform: 'linux', userHome: '/home/u' })).toBe(join('/xdg', 'capnode'));
    expect(resolveHome({ env: {}, platform: 'darwin', userHome: '/Users/u' })).toBe(join('/Users/u', 'Library', 'Application Support', 'capnode'));
    expect(resolveHome({ env: { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, platform: 'win32', userHome: 'C:\\Users\\u' })).toBe(
      join('C:\\Users\\u\\AppData\\Roaming', 'capnode'),
    );
  });
});

describe('runtime state and default URL', () => {
  let home: string;
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('reads host.json only while its process lives', () => {
    home = mkdtempSync(join(tmpdir(), 'capnode-paths-'));
    const paths = hostPaths(home);
    expect(readRuntimeState(paths.runtime)).toBeUndefined();
    const state = { pid: process.pid, url: 'http://127.0.0.1:9999/', adminUrl: 'http://127.0.0.1:9999/_capnode/', startedAt: '', version: '0' };
    writeFileSync(paths.runtime, JSON.stringify(state));
    expect(readRuntimeState(paths.runtime)).toEqual(state);
    expect(defaultMcpUrl(paths)).toBe('http://127.0.0.1:9999/');
    writeFileSync(paths.runtime, JSON.stringify({ ...state, pid: 2 ** 22 + 12345 }));
    expect(readRuntimeState(paths.runtime)).toBeUndefined();
  });

  it('falls back to settings.json, then the default port', () => {
    home = mkdtempSync(join(tmpdir(), 'capnode-paths-'));
    const paths = hostPaths(home);
    expect(defaultMcpUrl(paths)).toBe('http://127.0.0.1:8765/');
    writeFileSync(paths.settings, JSON.stringify({ mcp: { port: 9001, host: '::1' } }));
    expect(defaultMcpUrl(paths)).toBe('http://[::1]:9001/');
    writeFileSync(paths.settings, '{ not json');
    expect(defaultMcpUrl(paths)).toBe('http://127.0.0.1:8765/');
  });

  it('formats IPv6 hosts in brackets', () => {
    expect(formatUrl('127.0.0.1', 1)).toBe('http://127.0.0.1:1/');
    expect(formatUrl('::1', 2)).toBe('http://[::1]:2/');
  });
});
