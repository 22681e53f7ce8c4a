export type { HostErrorCode } from './errors.js';
export { HostError, isHostError } from './errors.js';
export type { HostPaths, ResolveHomeOptions, RuntimeState } from './paths.js';
export { HOME_ENV, DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, resolveHome, hostPaths, readRuntimeState, listRuntimeStates, readTokenFile, defaultMcpUrl, formatUrl } from './paths.js';
export type { Settings, SettingsStore, SettingsStoreOptions, SettingsUpdateOptions, LoadSettingsOptions, ParseSettingsOptions, McpClientSettings, McpServerEntry, McpClientSetup } from './settings.js';
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
} from './settings.js';
export type { ImportedToolsState, ImportedToolsStatus } from './importedTools.js';
export type { AuditRecord, AuditLogOptions, AuditLog, AuditStats, ControlAuditEntry, ControlCommand } from './audit.js';
export { createAuditLog, AUDIT_ROTATE_BYTES, AUDIT_MAX_FILES, AUDIT_MAX_QUEUED_BYTES } from './audit.js';
export type { HostPipeline, HostPipelineOptions, PipelineLogLevel } from './pipeline.js';
export { createHostPipeline, requestToolApproval, describeToolArgs } from './pipeline.js';
export type { HostLock, HostLockState, AcquireHostLockOptions } from './hostLock.js';
export { acquireHostLock, HOST_LOCK_FILE } from './hostLock.js';
export type { AdminApiOptions } from './adminApi.js';
export { createAdminHandler } from './adminApi.js';
export { createAppCapability } from './appStatus.js';
export type { GatewayConnectionConfig, GatewayOverride, GatewayNodeModeState, GatewayNodeModeStatus } from './gatewayMode.js';
export { GATEWAY_TOKEN_ENV, GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE, resolveGatewayConfig, gatewayNodeModeStatus } from './gatewayMode.js';
export type { ApproveGatewayPairingOptions, GatewayPairingResult } from './gatewayPairing.js';
export { approveGatewayPairing, readGatewayNodeId } from './gatewayPairing.js';
export type { DashboardState, DashboardStatus } from './dashboard/service.js';
export type { SettingsPatchResult } from './dashboard/settingsPatch.js';
export { SECRET_MASK } from './dashboard/settingsPatch.js';
export type { DashboardErrorCode, FieldError } from './dashboard/reply.js';
export type { PendingView } from './dashboard/pendingView.js';
export { DASHBOARD_SESSION_COOKIE, DASHBOARD_LOGIN_CODE_TTL_MS, DASHBOARD_SESSION_IDLE_MS } from './dashboard/sessions.js';
export type { HostLogLevel, HostOptions, McpListenerState, HostStatus, Host } from './host.js';
export type { PluginStatus, BuiltinPluginEntry } from './plugins.js';
export { DEFAULT_PLUGIN_LOAD_TIMEOUT_MS } from './plugins.js';
export { pluginsDirectory, pluginsDataDirectory, isPackageName, resolvePluginSource } from './pluginsLoad.js';
export type { UnavailableCommand } from './pluginsAvailability.js';
export { DEFAULT_AVAILABILITY_TIMEOUT_MS } from './pluginsAvailability.js';
export { COMMANDS_DOC_COMMAND, formatCommandsMarkdown, stockCommandsMarkdown } from './commandDocs.js';
export { createHost, HOST_LOG_ROTATE_BYTES, HOST_LOG_MAX_FILES } from './host.js';
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
} from './clientConfigs.js';
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
} from './clientConfigs.js';
export type { ServicePlatform, ServiceOptions, LaunchdOptions, WindowsTaskOptions, ServiceLocationOptions, ServiceFile } from './service.js';
export { SYSTEMD_UNIT_NAME, LAUNCHD_LABEL, WINDOWS_TASK_NAME, systemdQuote, systemdUnit, xmlEscape, launchdPlist, windowsQuoteArg, windowsLogonTask, servicePath, serviceFile } from './service.js';
export type { BrowserOpener, OpenBrowserOptions, OpenBrowserResult } from './browser.js';
export { BROWSER_OPENER_FAILS_WITHIN_MS, browserOpener, openBrowser } from './browser.js';
export type { ServerSentEvent, ReadServerSentEventsOptions } from './serverSentEvents.js';
export { MAX_SERVER_SENT_EVENT_LENGTH, readServerSentEvents } from './serverSentEvents.js';
