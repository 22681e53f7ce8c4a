import { describe, expect, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/host entries', () => {
  it('the root entry loads siblings only through their public entries', () => {
    expectImports('index.ts', (specifier) => !specifier.includes('/internal') && !specifier.startsWith('capnode'));
  });

  it('the /setup entry never loads the server, the gateway, the Node capabilities, the client runtime or zod', () => {
    expectImports('setup.ts', (specifier) => !/^(?:@capnode\/(?:mcp-server|gateway-bridge)(?:\/|$)|@capnode\/capabilities\/|@capnode\/mcp-client\/node$|zod$)/.test(specifier));
  });

  it('the /settings entry never loads the server, gateway or Node capability packages', () => {
    expectImports('settings.ts', (specifier) => !/^@capnode\/(?:mcp-server|gateway-bridge)(?:\/|$)/.test(specifier) && specifier !== '@capnode/capabilities/node' && specifier !== '@capnode/mcp-client/node');
  });

  it('the login-service generator loads only node:path; the browser opener only node:child_process; the server-sent event reader nothing (each besides the toolkit root)', () => {
    expectImports('setup/service.ts', (specifier) => specifier === 'node:path' || specifier === '@capnode/toolkit');
    expectImports('setup/browser.ts', (specifier) => specifier === 'node:child_process' || specifier === '@capnode/toolkit');
    expectImports('setup/serverSentEvents.ts', (specifier) => specifier === '@capnode/toolkit');
  });

  it('the root entry exports exactly the host, its pipeline, its errors and the gateway pairing', () =>
    expectExports('index.ts', [
      'GATEWAY_NODE_IDENTITY_FILE',
      'GATEWAY_TOKEN_ENV',
      'HOST_LOG_MAX_FILES',
      'HOST_LOG_ROTATE_BYTES',
      'HostError',
      'OPERATOR_IDENTITY_FILE',
      'approveGatewayPairing',
      'createHost',
      'createHostPipeline',
      'describeToolArgs',
      'isHostError',
      'readGatewayNodeId',
      'requestToolApproval',
      'resolveGatewayConfig',
    ]));

  it('the /setup entry exports exactly what the CLI and tray use without a host: paths, client configs, login services, plugin folders, the browser opener, the event reader', () =>
    expectExports('setup.ts', [
      'BROWSER_OPENER_FAILS_WITHIN_MS',
      'CLIENT_IDS',
      'DEFAULT_MCP_HOST',
      'DEFAULT_MCP_PORT',
      'DEFAULT_TOKEN_NAME',
      'HOME_ENV',
      'LAUNCHD_LABEL',
      'MAX_SERVER_SENT_EVENT_LENGTH',
      'SYSTEMD_UNIT_NAME',
      'WINDOWS_TASK_NAME',
      'addClientToken',
      'browserOpener',
      'clientConfigPath',
      'clientHoldsToken',
      'clientSnippet',
      'defaultMcpUrl',
      'ensureClientToken',
      'findClientConfigs',
      'formatUrl',
      'hostPaths',
      'hostSelfIdentity',
      'isClientId',
      'isPackageName',
      'isTokenName',
      'listClientTargets',
      'listClientTokens',
      'listRuntimeStates',
      'mergeClientConfig',
      'openBrowser',
      'pluginsDataDirectory',
      'pluginsDirectory',
      'previewClientConfig',
      'readClientToken',
      'readRuntimeState',
      'readServerSentEvents',
      'readTokenFile',
      'relayStdio',
      'resolveHome',
      'resolvePluginSource',
      'revokeClientToken',
      'serviceFile',
      'servicePath',
      'writeClientConfig',
    ]));

  it('the /settings entry exports exactly the settings-file API', () =>
    expectExports('settings.ts', [
      'DEFAULT_MCP_CLIENT_AGENT',
      'addMcpServers',
      'createSettingsStore',
      'defaultSettings',
      'loadSettings',
      'mcpClientSettingsSchema',
      'mcpServerEntries',
      'parseSettings',
      'removeMcpServer',
      'resolveMcpClientSettings',
      'setMcpReexport',
      'settingsSchema',
    ]));

  it('the /docs entry exports exactly the commands-doc and skill generators', () =>
    expectExports('docs.ts', ['COMMANDS_DOC_COMMAND', 'SKILL_DESCRIPTION', 'SKILL_DOC_COMMAND', 'SKILL_NAME', 'formatCommandsMarkdown', 'formatSkillMarkdown', 'stockCommandsMarkdown', 'stockSkillMarkdown']));

  it('no runtime name is exported by two entries', async () => {
    const entries = await Promise.all(['./index.js', './setup.js', './settings.js', './docs.js'].map(async (entry) => Object.keys(await import(entry))));
    const all = entries.flat();
    expect(all.length).toBe(new Set(all).size);
  });
});
