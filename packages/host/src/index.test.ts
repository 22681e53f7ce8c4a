import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

/** The bare (non-relative) specifiers of every module an entry loads, following relative imports. */
function bareImportsOf(entry: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] ?? '');
    modules.set(file, specifiers.filter((specifier) => !specifier.startsWith('.')));
    for (const specifier of specifiers) if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
  };
  visit(join(sourceDirectory, entry));
  return modules;
}

/** Asserts that every bare import of the entry's module graph passes `allowed`. */
function expectImports(entry: string, allowed: (specifier: string) => boolean): void {
  const graph = bareImportsOf(entry);
  expect(graph.size).toBeGreaterThan(0);
  for (const [file, specifiers] of graph) {
    for (const specifier of specifiers) expect(allowed(specifier), `${file} imports ${specifier}`).toBe(true);
  }
}

describe('@capnode/host entries', () => {
  it('the root entry loads siblings only through their public entries', () => {
    expectImports('index.ts', (specifier) => !specifier.includes('/internal') && !specifier.startsWith('capnode'));
  });

  it('the /paths entry loads no sibling but @capnode/protocol/node', () => {
    expectImports('paths.ts', (specifier) => specifier.startsWith('node:') || specifier === '@capnode/protocol/node');
  });

  it('the /settings entry never loads the server, gateway or Node capability packages', () => {
    expectImports('settings.ts', (specifier) => !/^@capnode\/(?:mcp-server|gateway-bridge)(?:\/|$)/.test(specifier) && specifier !== '@capnode/capabilities/node' && specifier !== '@capnode/mcp-client/node');
  });

  it('the root entry exports exactly the documented runtime API', async () => {
    const entry = await import('./index.js');
    expect(Object.keys(entry).sort()).toEqual([
      'AUDIT_MAX_FILES',
      'AUDIT_MAX_QUEUED_BYTES',
      'AUDIT_ROTATE_BYTES',
      'DEFAULT_MCP_CLIENT_AGENT',
      'DEFAULT_MCP_HOST',
      'DEFAULT_MCP_PORT',
      'GATEWAY_TOKEN_ENV',
      'HOME_ENV',
      'HOST_LOCK_FILE',
      'HostError',
      'NODE_IDENTITY_FILE',
      'OPERATOR_IDENTITY_FILE',
      'acquireHostLock',
      'addMcpServers',
      'createAdminHandler',
      'createAppCapability',
      'createAuditLog',
      'createHost',
      'createHostPipeline',
      'createSettingsStore',
      'defaultMcpUrl',
      'defaultSettings',
      'describeToolArgs',
      'formatUrl',
      'hostPaths',
      'isHostError',
      'listRuntimeStates',
      'loadSettings',
      'mcpClientSettingsSchema',
      'mcpServerEntries',
      'nodeModeStatus',
      'parseSettings',
      'readRuntimeState',
      'readTokenFile',
      'removeMcpServer',
      'requestToolApproval',
      'resolveGatewayConfig',
      'resolveHome',
      'resolveMcpClientSettings',
      'setMcpReexport',
      'settingsSchema',
    ]);
  });

  it('the /paths entry exports exactly the documented runtime API', async () => {
    const entry = await import('./paths.js');
    expect(Object.keys(entry).sort()).toEqual([
      'DEFAULT_MCP_HOST',
      'DEFAULT_MCP_PORT',
      'HOME_ENV',
      'defaultMcpUrl',
      'formatUrl',
      'hostPaths',
      'listRuntimeStates',
      'readRuntimeState',
      'readTokenFile',
      'resolveHome',
    ]);
  });

  it('the /settings entry exports exactly the documented runtime API', async () => {
    const entry = await import('./settings.js');
    expect(Object.keys(entry).sort()).toEqual([
      'DEFAULT_MCP_CLIENT_AGENT',
      'HostError',
      'addMcpServers',
      'createSettingsStore',
      'defaultSettings',
      'isHostError',
      'loadSettings',
      'mcpClientSettingsSchema',
      'mcpServerEntries',
      'parseSettings',
      'removeMcpServer',
      'resolveMcpClientSettings',
      'setMcpReexport',
      'settingsSchema',
    ]);
  });
});
