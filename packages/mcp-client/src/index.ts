export type { McpClientErrorCode, ConfigIssue } from './errors.js';
export { McpClientError, isMcpClientError } from './errors.js';
export type {
  McpTransportKind,
  AutonomyLevel,
  McpServerConfig,
  McpServerAuth,
  JwtSigningAlgorithm,
  McpBundleConfig,
  McpAgentConfig,
  RiskProfile,
  McpConfig,
  McpConfigValidation,
  McpConfigOptions,
} from './config.js';
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_CONNECT_TIMEOUT_SECS,
  DEFAULT_TOOL_TIMEOUT_SECS,
  MAX_TIMEOUT_SECS,
  validateMcpConfig,
  parseMcpConfig,
  normalizeRiskProfile,
  formatConfigIssues,
} from './config.js';
export type { ImportFormat, ImportOptions, ImportedServer, ImportResult } from './importers.js';
export { importMcpServers } from './importers.js';
export type { SelfHostIdentity } from './selfHost.js';
export { HOST_MARKER_CAPABILITY, hostInstanceOf, selfEntryReason } from './selfHost.js';
export type { Provenance } from './provenance.js';
export { MAX_CONTEXT_TEXT, wrapUntrusted } from './provenance.js';
export type { JsonLimit } from './internal/contentLimits.js';
export { CONTENT_LIMITS } from './internal/contentLimits.js';
export type { ServerToolNames, NamedTool, ToolNaming, ToolNamingOptions } from './naming.js';
export { MAX_SERVER_PART, MAX_TOOL_NAME, NAME_SEPARATOR, toServerPart, assignToolNames } from './naming.js';
export type { AgentGrant } from './grants.js';
export { resolveAgentGrant } from './grants.js';
export type { ToolPolicy, ToolPolicyOptions, ApprovalRequest, Approver, PolicyHookOptions } from './policy.js';
export { createToolPolicy, createPolicyHook } from './policy.js';
export type { McpToolsSlot } from './mcpToolsSlot.js';
export { createMcpToolsSlot } from './mcpToolsSlot.js';
export type { ImageMimeType, ModelTextContent, ImageAttachment, ModelToolResult, BinaryStore, ModelResultOptions } from './results.js';
export {
  MAX_BINARY_ITEMS,
  MAX_BINARY_TOTAL_BYTES,
  MAX_BINARY_FILE_BYTES,
  toModelResult,
} from './results.js';
export type {
  Logger,
  McpConnection,
  ConnectRequest,
  McpConnector,
  ServerState,
  ServerDiagnostic,
  McpTool,
  McpCallOptions,
  McpRuntimeOptions,
  McpRuntime,
  PinnedResource,
  McpRuntimeEvent,
  McpRuntimeListener,
  ServerStateEvent,
  CatalogChangedEvent,
  ListChangedEvent,
  DiagnosticEvent,
  ServerRequestContext,
  SamplingHandler,
  ElicitationHandler,
  CallElicitor,
} from './types.js';
