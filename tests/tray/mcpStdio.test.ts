import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { cliLaunch } from '../../packages/host/src/parts/dashboard/cliLaunch.js';
import { tempDir } from '../support/testHost.js';

const trayBin = realpathSync(resolve(fileURLToPath(new URL('../../apps/tray/dist/bin.js', import.meta.url))));

describe('capnode-tray mcp: a tray installed without the CLI still connects Claude Desktop', () => {
  it('the dashboard launch falls back to the tray bin, and that launch serves the host over stdio to an SDK v2 client', async () => {
    using dir = tempDir('capnode-tray-mcp-');
    // A host installed where no capnode CLI can be resolved (no PATH entry, nothing beside it), run by the tray.
    const hostFile = join(dir.path, 'lib', 'node_modules', '@capnode', 'host', 'dist', 'index.js');
    mkdirSync(join(hostFile, '..'), { recursive: true });
    writeFileSync(join(hostFile, '..', '..', 'package.json'), JSON.stringify({ name: '@capnode/host' }));
    const home = join(dir.path, 'config');
    const launch = cliLaunch({ env: { PATH: '', CAPNODE_HOME: home }, home, userHome: dir.path, platform: 'linux', script: trayBin, hostFile });
    expect(launch).toEqual({ command: process.execPath, args: [trayBin, 'mcp'], env: { CAPNODE_HOME: home } });

    const client = new Client({ name: 'claude-desktop-like', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: launch.command, args: [...launch.args], env: { ...(process.env as Record<string, string>), ...launch.env }, stderr: 'pipe' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toContain('device.info');
      const result = (await client.callTool({ name: 'device.info', arguments: {} })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(result.isError).not.toBe(true);
      expect(result.structuredContent).toHaveProperty('platform');
    } finally {
      await client.close();
    }
  });

  it('refuses options after mcp with exit code 2, before starting anything', () => {
    const run = spawnSync(process.execPath, [trayBin, 'mcp', '--attach'], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/mcp takes no options/);
  });
});
