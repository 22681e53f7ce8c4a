export type { Settings, SettingsStore, SettingsStoreOptions, SettingsUpdateOptions, LoadSettingsOptions, ParseSettingsOptions, McpClientSettings, McpServerEntry, McpClientSetup } from './config/settings.js';
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
