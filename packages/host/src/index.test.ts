import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectEntryImports } from '../../../tests/support/entrySurface.js';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

const expectImports = (entry: string, allowed: (specifier: string) => boolean): void =>
  expectEntryImports(join(sourceDirectory, entry), allowed);

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
      'DASHBOARD_LOGIN_CODE_TTL_MS',
      'DASHBOARD_SESSION_COOKIE',
      'DASHBOARD_SESSION_IDLE_MS',
      'DEFAULT_MCP_CLIENT_AGENT',
      'DEFAULT_MCP_HOST',
      'DEFAULT_MCP_PORT',
      'GATEWAY_TOKEN_ENV',
      'HOME_ENV',
      'HOST_LOCK_FILE',
      'HostError',
      'NODE_IDENTITY_FILE',
      'OPERATOR_IDENTITY_FILE',
      'SECRET_MASK',
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
