import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transport } from '@capnode/capabilities';
import { gatewayNodeDeclaration } from '@capnode/gateway-bridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHost } from '../../host/host.js';
import { buildOpenAgentCatalog } from '../openagent/catalog.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-app-'));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ gateway: { url: 'ws://127.0.0.1:9', token: 'gw-token-0123456789abcdefSECRET' } }), { mode: 0o600 });
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('app capability', () => {
  it('is local-only: never among what a gateway is declared, never in the OpenAgent catalog', async () => {
    await using host = createHost({ home, builtins: false, builtinPlugins: false, logFile: false, onLog: () => {} });
    const app = host.registry.commands().filter((command) => command.category === 'app');
    expect(app.map((command) => command.name).sort()).toEqual(
      [
        'app.approvals.list',
        'app.connection.gateways',
        'app.connection.reconnect',
        'app.connection.status',
        'app.dashboard.url',
        'app.pairing.approve',
        'app.pairing.list',
        'app.pairing.reject',
        'app.plugins.list',
        'app.servers.list',
        'app.settings.get',
        'app.settings.set',
        'app.status',
      ].sort(),
    );
    expect(app.every((command) => command.definition.localOnly === true)).toBe(true);
    expect(host.registry.commands({ excludeLocalOnly: true }).filter((command) => command.name.startsWith('app.'))).toEqual([]);
    // What the gateway node declares (an invoke of anything undeclared is refused before the pipeline).
    expect(gatewayNodeDeclaration(host.registry).commands.filter((name) => name.startsWith('app.'))).toEqual([]);
    const catalog = buildOpenAgentCatalog({ registry: host.registry, consent: () => host.settings.get().consent, servers: 'all', imported: () => new Map() });
    expect(JSON.stringify(catalog.servers)).not.toContain('app.');
    for (const command of app) expect(catalog.resolve('capnode', command.name)).toBe('tool_not_found');
  });

  it.each(['gateway', 'openagent'] as const)('refuses a call that still arrives over %s, before it reads anything', async (transport: Transport) => {
    await using host = createHost({ home, builtins: false, builtinPlugins: false, logFile: false, onLog: () => {} });
    for (const command of ['app.settings.get', 'app.settings.set', 'app.connection.gateways', 'app.dashboard.url', 'app.pairing.approve']) {
      const outcome = await host.invoker.invoke({ command, args: command === 'app.settings.set' ? { patch: { mcp: { maxConcurrency: 3 } } } : {}, transport });
      expect(outcome.result, command).toMatchObject({ ok: false, error: { code: 'denied', message: expect.stringContaining('local-only') } });
      expect(JSON.stringify(outcome)).not.toContain('gw-token');
    }
    expect(host.approvals.list()).toEqual([]);
    expect(host.settings.reload().mcp.maxConcurrency).toBe(16);
  });

  it('answers a local call (transport cli) with the secrets as presence only', async () => {
    await using host = createHost({ home, builtins: false, builtinPlugins: false, logFile: false, onLog: () => {} });
    const outcome = await host.invoker.invoke({ command: 'app.settings.get', args: {}, transport: 'cli' });
    expect(outcome.result).toMatchObject({ ok: true, structured: { settings: { gateway: { token: '••••••••' } }, secrets: { gatewayToken: true } } });
    expect(JSON.stringify(outcome)).not.toContain('gw-token');
  });
});
