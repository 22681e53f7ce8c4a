import { describe, expect, it } from 'vitest';
import { defaultSettings } from '../settings.js';
import { SECRET_MASK, changedPaths, isLivePath, maskSettings, mergePatch } from './settingsPatch.js';

describe('settings patch', () => {
  it('merges objects, replaces arrays and values, removes null', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1, 2], e: 1 }, { a: { b: 3 }, d: [3], e: null })).toEqual({ a: { b: 3, c: 2 }, d: [3] });
  });

  it('lists changed paths two levels deep and tells live ones', () => {
    const before = defaultSettings() as unknown as Record<string, unknown>;
    const after = mergePatch(before, { mcp: { enabled: false, port: 9000 }, execApprovals: { mode: 'full' }, node: { url: 'ws://127.0.0.1:1' } }) as Record<string, unknown>;
    const changed = changedPaths(before, after);
    expect(changed.sort()).toEqual(['execApprovals.mode', 'mcp.enabled', 'mcp.port', 'node.url']);
    expect(changed.filter(isLivePath).sort()).toEqual(['execApprovals.mode', 'mcp.enabled', 'node.url']);
  });

  it('masks the gateway token and imported servers’ env and header values', () => {
    const settings = {
      ...defaultSettings(),
      node: { enabled: false, token: 'gateway-secret' },
      mcpClient: { servers: [{ name: 'a', command: 'x', env: { API_KEY: 'k1' } }, { name: 'b', url: 'http://127.0.0.1:1/', headers: { Authorization: 'Bearer t' } }] },
    };
    const masked = JSON.stringify(maskSettings(settings));
    expect(masked).not.toMatch(/gateway-secret|k1|Bearer t/);
    expect(masked).toContain(SECRET_MASK);
    expect(masked).toContain('API_KEY');
  });
});
