import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientConfigPath } from '../../../setup/clientConfigs.js';
import { clientConfigFiles } from './serversImport.js';

describe('clientConfigFiles', () => {
  it('looks where capnode config writes each client, per platform, and at Claude Code’s ~/.mcp.json', () => {
    const home = join('/home', 'user');
    expect(clientConfigFiles(home, {}, 'linux')).toEqual([
      { client: 'Claude Desktop', path: join(home, '.config', 'Claude', 'claude_desktop_config.json') },
      { client: 'Claude Code', path: join(home, '.claude.json') },
      { client: 'Claude Code', path: join(home, '.mcp.json') },
      { client: 'Cursor', path: join(home, '.cursor', 'mcp.json') },
      { client: 'VS Code', path: join(home, '.config', 'Code', 'User', 'mcp.json') },
    ]);
    const support = join(home, 'Library', 'Application Support');
    expect(clientConfigFiles(home, { XDG_CONFIG_HOME: '/xdg' }, 'darwin').map(({ path }) => path)).toEqual([
      join(support, 'Claude', 'claude_desktop_config.json'),
      join(home, '.claude.json'),
      join(home, '.mcp.json'),
      join(home, '.cursor', 'mcp.json'),
      join(support, 'Code', 'User', 'mcp.json'),
    ]);
    for (const env of [{ APPDATA: '/appdata' }, {}]) {
      const files = clientConfigFiles(home, env, 'win32');
      expect(files.map(({ path }) => path)).toEqual([
        join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Claude', 'claude_desktop_config.json'),
        join(home, '.claude.json'),
        join(home, '.mcp.json'),
        join(home, '.cursor', 'mcp.json'),
        join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Code', 'User', 'mcp.json'),
      ]);
    }
    expect(clientConfigFiles(home, { XDG_CONFIG_HOME: '/xdg' }, 'linux')[0]!.path).toBe(clientConfigPath('claude-desktop', { platform: 'linux', userHome: home, env: { XDG_CONFIG_HOME: '/xdg' } }));
  });
});
