import { describe, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/host entries', () => {
  it('the root entry loads siblings only through their public entries', () => {
    expectImports('index.ts', (specifier) => !specifier.includes('/internal') && !specifier.startsWith('capnode'));
  });

  it('the /paths entry loads no sibling but the toolkit', () => {
    expectImports('paths.ts', (specifier) => specifier.startsWith('node:') || specifier === '@capnode/toolkit' || specifier === '@capnode/toolkit/node');
  });

  it('the /settings entry never loads the server, gateway or Node capability packages', () => {
    expectImports('settings.ts', (specifier) => !/^@capnode\/(?:mcp-server|gateway-bridge)(?:\/|$)/.test(specifier) && specifier !== '@capnode/capabilities/node' && specifier !== '@capnode/mcp-client/node');
  });

  it('the root entry exports exactly the documented runtime API', () =>
    expectExports('index.ts', [
      'AUDIT_MAX_FILES',
      'AUDIT_MAX_QUEUED_BYTES',
      'AUDIT_ROTATE_BYTES',
      'BROWSER_OPENER_FAILS_WITHIN_MS',
      'CLIENT_IDS',
      'COMMANDS_DOC_COMMAND',
      'DASHBOARD_LOGIN_CODE_TTL_MS',
      'DASHBOARD_SESSION_COOKIE',
      'DASHBOARD_SESSION_IDLE_MS',
      'DEFAULT_AVAILABILITY_TIMEOUT_MS',
      'DEFAULT_MCP_CLIENT_AGENT',
      'DEFAULT_MCP_HOST',
      'DEFAULT_MCP_PORT',
      'DEFAULT_PLUGIN_LOAD_TIMEOUT_MS',
      'GATEWAY_TOKEN_ENV',
      'HOME_ENV',
      'HOST_LOCK_FILE',
      'HOST_LOG_MAX_FILES',
      'HOST_LOG_ROTATE_BYTES',
      'HostError',
      'LAUNCHD_LABEL',
      'MAX_SERVER_SENT_EVENT_LENGTH',
      'NODE_IDENTITY_FILE',
      'OPERATOR_IDENTITY_FILE',
      'SECRET_MASK',
      'SYSTEMD_UNIT_NAME',
      'WINDOWS_TASK_NAME',
      'acquireHostLock',
      'addMcpServers',
      'approveGatewayPairing',
      'browserOpener',
      'clientConfigPath',
      'clientSnippet',
      'createAdminHandler',
      'createAppCapability',
      'createAuditLog',
      'createHost',
      'createHostPipeline',
      'createSettingsStore',
      'defaultMcpUrl',
      'defaultSettings',
      'describeToolArgs',
      'findClientConfigs',
      'formatCommandsMarkdown',
      'formatUrl',
      'hostPaths',
      'isClientId',
      'isHostError',
      'isPackageName',
      'launchdPlist',
      'listClientTargets',
      'listRuntimeStates',
      'loadSettings',
      'mcpClientSettingsSchema',
      'mcpServerEntries',
      'mergeClientConfig',
      'nodeModeStatus',
      'openBrowser',
      'parseSettings',
      'pluginsDataDirectory',
      'pluginsDirectory',
      'previewClientConfig',
      'readGatewayNodeId',
      'readRuntimeState',
      'readServerSentEvents',
      'readTokenFile',
      'removeMcpServer',
      'requestToolApproval',
      'resolveGatewayConfig',
      'resolveHome',
      'resolveMcpClientSettings',
      'resolvePluginSource',
      'serviceFile',
      'servicePath',
      'setMcpReexport',
      'settingsSchema',
      'stockCommandsMarkdown',
      'systemdQuote',
      'systemdUnit',
      'windowsLogonTask',
      'windowsQuoteArg',
      'writeClientConfig',
      'xmlEscape',
    ]));

  it('the /paths entry exports exactly the documented runtime API', () =>
    expectExports('paths.ts', [
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
    ]));

  it('the /service entry loads only node:path and the toolkit root, and exports exactly the login-service generators and the error they throw', async () => {
    expectImports('service.ts', (specifier) => specifier === 'node:path' || specifier === '@capnode/toolkit');
    await expectExports('service.ts', ['HostError', 'LAUNCHD_LABEL', 'SYSTEMD_UNIT_NAME', 'WINDOWS_TASK_NAME', 'isHostError', 'launchdPlist', 'serviceFile', 'servicePath', 'systemdQuote', 'systemdUnit', 'windowsLogonTask', 'windowsQuoteArg', 'xmlEscape']);
  });

  it('the /browser entry loads only node:child_process and the toolkit root, and exports exactly the browser opener', async () => {
    expectImports('browser.ts', (specifier) => specifier === 'node:child_process' || specifier === '@capnode/toolkit');
    await expectExports('browser.ts', ['BROWSER_OPENER_FAILS_WITHIN_MS', 'browserOpener', 'openBrowser']);
  });

  it('the /events entry loads nothing but the toolkit root (HostError) and exports exactly the server-sent event reader', async () => {
    expectImports('serverSentEvents.ts', (specifier) => specifier === '@capnode/toolkit');
    await expectExports('serverSentEvents.ts', ['MAX_SERVER_SENT_EVENT_LENGTH', 'readServerSentEvents']);
  });

  it('the /settings entry exports exactly the documented runtime API', () =>
    expectExports('settings.ts', [
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
    ]));
});
