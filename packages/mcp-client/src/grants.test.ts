import { expect, test } from 'vitest';
import { parseMcpConfig } from './config.js';
import { resolveAgentGrant } from './grants.js';

const { config } = parseMcpConfig({
  servers: [
    { name: 'filesystem', command: 'x' },
    { name: 'github', command: 'x' },
    { name: 'web', url: 'https://x' },
    { name: 'off', command: 'x', enabled: false },
  ],
  bundles: {
    files: { servers: ['filesystem', 'off'] },
    dev: { servers: ['github', 'web', 'ghost'], exclude: ['web'] },
  },
  agents: {
    assistant: { mcp_bundles: ['files', 'dev', 'missing'], risk_profile: 'strict' },
    bare: {},
  },
  risk_profiles: { strict: { deny_all_tools: true } },
});

test('an agent gets the union of its bundles minus every exclude (deny wins)', () => {
  const grant = resolveAgentGrant(config, 'assistant');
  expect(grant.servers.map((s) => s.name)).toEqual(['filesystem', 'github']);
  expect(grant.disabled).toEqual(['off']);
  expect(grant.profile.denyAllTools).toBe(true);
  expect(grant.warnings).toEqual(["bundle 'dev' names unknown server 'ghost'; it grants nothing", "agent 'assistant' names unknown bundle 'missing'; it grants nothing"]);
});

test('secure by default: no bundles, unknown agents, or mcp.enabled = false grant nothing', () => {
  expect(resolveAgentGrant(config, 'bare').servers).toEqual([]);
  const unknown = resolveAgentGrant(config, 'nobody');
  expect(unknown.servers).toEqual([]);
  expect(unknown.warnings[0]).toMatch(/not configured/);
  const disabled = parseMcpConfig({ enabled: false, servers: [{ name: 'a', command: 'x' }], bundles: { b: { servers: ['a'] } }, agents: { x: { mcp_bundles: ['b'] } } }).config;
  expect(resolveAgentGrant(disabled, 'x').servers).toEqual([]);
});
