export type { HostPaths, ResolveHomeOptions, RuntimeState } from './config/paths.js';
export { hostSelfIdentity } from './config/selfIdentity.js';
export { HOME_ENV, DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, resolveHome, hostPaths, readRuntimeState, listRuntimeStates, readTokenFile, defaultMcpUrl, formatUrl } from './config/paths.js';
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
  clientHoldsToken,
  clientConfigPath,
  clientSnippet,
  mergeClientConfig,
  previewClientConfig,
  writeClientConfig,
  findClientConfigs,
  listClientTargets,
} from './setup/clientConfigs.js';
export type { ClientTokenInfo, TokenWarnings } from './config/clientTokens.js';
export { DEFAULT_TOKEN_NAME, isTokenName, listClientTokens, readClientToken, ensureClientToken, addClientToken, revokeClientToken } from './config/clientTokens.js';
export type { ServicePlatform, ServiceOptions, LaunchdOptions, WindowsTaskOptions, ServiceLocationOptions, ServiceFile } from './setup/service.js';
export { SYSTEMD_UNIT_NAME, LAUNCHD_LABEL, WINDOWS_TASK_NAME, servicePath, serviceFile } from './setup/service.js';
export { pluginsDirectory, pluginsDataDirectory, isPackageName, resolvePluginSource } from './setup/pluginsLoad.js';
export type { BrowserOpener, OpenBrowserOptions, OpenBrowserResult } from './setup/browser.js';
export { BROWSER_OPENER_FAILS_WITHIN_MS, browserOpener, openBrowser } from './setup/browser.js';
export type { ServerSentEvent, ReadServerSentEventsOptions } from './setup/serverSentEvents.js';
export { MAX_SERVER_SENT_EVENT_LENGTH, readServerSentEvents } from './setup/serverSentEvents.js';
export type { StdioRelayOptions } from './setup/stdioRelay.js';
export { relayStdio } from './setup/stdioRelay.js';
