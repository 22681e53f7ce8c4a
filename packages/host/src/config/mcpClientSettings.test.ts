import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addMcpServers, removeMcpServer, resolveMcpClientSettings, setMcpReexport } from './mcpClientSettings.js';
import { createSettingsStore, defaultSettings, loadSettings } from './settings.js';
import { settingsLoadError } from '../../../../tests/support/settingsFile.js';

let home: string;
let path: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-mcpclient-settings-'));
  path = join(home, 'settings.json');
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const loadError = (value: unknown): string => settingsLoadError(path, JSON.stringify(value));

const stdio = { name: 'everything', command: 'node', args: ['server.js'], env: { API_KEY: 'secret-value-1' } };

describe('settings mcpClient', () => {
  it('is absent by default and resolves to nothing to connect', () => {
    expect(defaultSettings().mcpClient).toBeUndefined();
    const setup = resolveMcpClientSettings(defaultSettings());
    expect(setup).toMatchObject({ reexport: false, agent: 'capnode', allServers: true, servers: [] });
  });

  it('validates with the MCP client schema and names every bad value by its path, never echoing secrets', () => {
    const message = loadError({
      mcpClient: {
        servers: [
          { name: 'a', command: 'x', env: { NODE_OPTIONS: 'secret-value-2' } },
          { name: 'b', url: 'ftp://example.com', tool_timeout_secs: 601 },
        ],
        frobnicate: true,
      },
    });
    expect(message).toContain(path);
    expect(message).toContain('mcpClient.servers[0].env.NODE_OPTIONS: is refused');
    expect(message).toContain('mcpClient.servers[1].url: must use http:// or https://');
    expect(message).toContain('mcpClient.servers[1].tool_timeout_secs: must be at most 600 seconds');
    expect(message).toContain('mcpClient: unknown key(s): frobnicate');
    expect(message).not.toContain('secret-value-2');
    expect(loadError({ mcpClient: { reexport: 'yes' } })).toContain('mcpClient.reexport');
  });

  it('keeps the section as written and resolves transport, defaults and the servers to connect', () => {
    writeFileSync(path, JSON.stringify({ mcpClient: { reexport: true, servers: [stdio, { name: 'off', url: 'http://127.0.0.1:1/mcp', enabled: false }] } }));
    const settings = loadSettings(path);
    expect(settings.mcpClient).toEqual({ reexport: true, servers: [stdio, { name: 'off', url: 'http://127.0.0.1:1/mcp', enabled: false }] });
    const setup = resolveMcpClientSettings(settings);
    expect(setup.reexport).toBe(true);
    expect(setup.allServers).toBe(true);
    expect(setup.config.servers.map((server) => [server.name, server.transport])).toEqual([
      ['everything', 'stdio'],
      ['off', 'http'],
    ]);
    expect(setup.servers.map((server) => server.name)).toEqual(['everything']);
  });

  it('applies grants when the host agent is configured', () => {
    writeFileSync(
      path,
      JSON.stringify({
        mcpClient: {
          agent: 'desk',
          servers: [stdio, { name: 'other', command: 'node' }],
          bundles: { main: { servers: ['other'] } },
          agents: { desk: { mcp_bundles: ['main'] } },
        },
      }),
    );
    const setup = resolveMcpClientSettings(loadSettings(path));
    expect(setup.agent).toBe('desk');
    expect(setup.allServers).toBe(false);
    expect(setup.servers.map((server) => server.name)).toEqual(['other']);
  });

  it('adds, refuses duplicates, replaces and removes server entries atomically', async () => {
    const store = createSettingsStore(path);
    await addMcpServers(store, [stdio]);
    expect(JSON.parse(readFileSync(path, 'utf8')).mcpClient).toEqual({ servers: [stdio] });

    await expect(addMcpServers(store, [{ name: 'EVERYTHING', command: 'other' }])).rejects.toThrow(/already configured.*capnode servers remove everything/);
    await addMcpServers(store, [{ name: 'everything', command: 'other' }], { replace: true });
    expect(JSON.parse(readFileSync(path, 'utf8')).mcpClient.servers).toEqual([{ name: 'everything', command: 'other' }]);

    const before = readFileSync(path, 'utf8');
    await expect(addMcpServers(store, [{ name: 'bad', command: 'x', env: { LD_PRELOAD: '/tmp/x.so' } }])).rejects.toThrow(/mcpClient\.servers\[1\]\.env\.LD_PRELOAD: is refused/);
    expect(readFileSync(path, 'utf8')).toBe(before);

    await setMcpReexport(store, true);
    expect(resolveMcpClientSettings(loadSettings(path)).reexport).toBe(true);

    const beforeRemove = readFileSync(path, 'utf8');
    expect(await removeMcpServer(store, 'nope')).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe(beforeRemove);
    expect((await removeMcpServer(store, 'Everything'))?.name).toBe('everything');
    expect(JSON.parse(readFileSync(path, 'utf8')).mcpClient).toEqual({ reexport: true, servers: [] });
  });
});
