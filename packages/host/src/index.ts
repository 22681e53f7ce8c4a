export type { HostErrorCode } from './errors.js';
export { HostError, isHostError } from './errors.js';
export type { HostPaths, ResolveHomeOptions, RuntimeState } from './config/paths.js';
export { HOME_ENV, DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, resolveHome, hostPaths, readRuntimeState, listRuntimeStates, readTokenFile, defaultMcpUrl, formatUrl } from './config/paths.js';
export type { Settings, SettingsStore, SettingsStoreOptions, SettingsUpdateOptions, LoadSettingsOptions, McpClientSettings, McpServerEntry, McpClientSetup } from './config/settings.js';
export {
  settingsSchema,
  defaultSettings,
  parseSettings,
  loadSettings,
  createSettingsStore,
  DEFAULT_MCP_CLIENT_AGENT,
  mcpClientSettingsSchema,
  resolveMcpClientSettings,
  mcpServerEntries,
  addMcpServers,
  removeMcpServer,
  setMcpReexport,
} from './config/settings.js';
export type { ImportedToolsState, ImportedToolsStatus } from './parts/imports/importedTools.js';
export type { AuditRecord, AuditLogOptions, AuditLog, AuditStats, ControlAuditEntry, ControlCommand } from './audit/audit.js';
export { createAuditLog, AUDIT_ROTATE_BYTES, AUDIT_MAX_FILES, AUDIT_MAX_QUEUED_BYTES } from './audit/audit.js';
export type { HostPipeline, HostPipelineOptions, PipelineLogLevel } from './parts/pipeline/pipeline.js';
export { createHostPipeline, requestToolApproval, describeToolArgs } from './parts/pipeline/pipeline.js';
export type { HostLock, HostLockState, AcquireHostLockOptions } from './locks/hostLock.js';
export { acquireHostLock, HOST_LOCK_FILE } from './locks/hostLock.js';
export type { AdminApiOptions } from './parts/admin/adminApi.js';
export { createAdminHandler } from './parts/admin/adminApi.js';
export { createAppCapability } from './parts/pipeline/appStatus.js';
export type { GatewayConnectionConfig, GatewayOverride, NodeModeState, NodeModeStatus } from './parts/gateway/gatewayMode.js';
export { GATEWAY_TOKEN_ENV, NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE, resolveGatewayConfig, nodeModeStatus } from './parts/gateway/gatewayMode.js';
export type { ApproveGatewayPairingOptions, GatewayPairingResult } from './parts/gateway/gatewayPairing.js';
export { approveGatewayPairing, readGatewayNodeId } from './parts/gateway/gatewayPairing.js';
export type { DashboardState, DashboardStatus } from './parts/dashboard/service.js';
export type { SettingsPatchResult } from './config/settingsPatch.js';
export { SECRET_MASK } from './config/settingsPatch.js';
export type { DashboardErrorCode, FieldError } from './parts/dashboard/reply.js';
export type { PendingView } from './parts/dashboard/pendingView.js';
export { DASHBOARD_SESSION_COOKIE, DASHBOARD_LOGIN_CODE_TTL_MS, DASHBOARD_SESSION_IDLE_MS } from './parts/dashboard/sessions.js';
export type { HostLogLevel, HostOptions, McpListenerState, HostStatus, Host } from './host/host.js';
export type { PluginStatus, BuiltinPluginEntry } from './parts/plugins/plugins.js';
export { DEFAULT_PLUGIN_LOAD_TIMEOUT_MS } from './parts/plugins/plugins.js';
export { pluginsDirectory, pluginsDataDirectory, isPackageName, resolvePluginSource } from './setup/pluginsLoad.js';
export type { UnavailableCommand } from './parts/pipeline/pluginsAvailability.js';
export { DEFAULT_AVAILABILITY_TIMEOUT_MS } from './parts/pipeline/pluginsAvailability.js';
export { COMMANDS_DOC_COMMAND, formatCommandsMarkdown, stockCommandsMarkdown } from './docs/commandDocs.js';
export { createHost, HOST_LOG_ROTATE_BYTES, HOST_LOG_MAX_FILES } from './host/host.js';
export type {
  ClientId,
  StdioLaunch,
  ClientPlatformOptions,
  ClientConfigOptions,
  ClientSnippet,
  ClientTarget,
  ClientConfigFile,
  ClientConfigEntry,
  ClientConfigPreview,
  WriteClientConfigOptions,
  ClientConfigWrite,
} from './setup/clientConfigs.js';
export {
  CLIENT_IDS,
  isClientId,
  clientConfigPath,
  clientSnippet,
  mergeClientConfig,
  previewClientConfig,
  writeClientConfig,
  findClientConfigs,
  listClientTargets,
} from './setup/clientConfigs.js';
export type { ServicePlatform, ServiceOptions, LaunchdOptions, WindowsTaskOptions, ServiceLocationOptions, ServiceFile } from './setup/service.js';
export { SYSTEMD_UNIT_NAME, LAUNCHD_LABEL, WINDOWS_TASK_NAME, systemdQuote, systemdUnit, xmlEscape, launchdPlist, windowsQuoteArg, windowsLogonTask, servicePath, serviceFile } from './setup/service.js';
export type { BrowserOpener, OpenBrowserOptions, OpenBrowserResult } from './setup/browser.js';
export { BROWSER_OPENER_FAILS_WITHIN_MS, browserOpener, openBrowser } from './setup/browser.js';
export type { ServerSentEvent, ReadServerSentEventsOptions } from './setup/serverSentEvents.js';
export { MAX_SERVER_SENT_EVENT_LENGTH, readServerSentEvents } from './setup/serverSentEvents.js';
