export type { CapabilityErrorCode } from './errors.js';
export { CapabilityError, isCapabilityError } from './errors.js';
export type { Content, CommandSuccess, CommandFailure, CommandResult, CommandOutput } from './content.js';
export { text, json, image, audio, resource, fail, toCommandResult } from './content.js';
export type {
  CallClassification,
  CommandAnnotations,
  ElicitationRequest,
  ElicitationResult,
  Elicitor,
  ProgressUpdate,
  LogLevel,
  Transport,
  InvocationRequest,
  ClientConnection,
  ClientEvent,
  ShellCompletedEvent,
  CommandContext,
  CommandDefinition,
  Capability,
  ConsentCategory,
  Availability,
  AvailabilityProbe,
} from './contract.js';
export type { PluginContext, PluginExport } from './plugin.js';
export { definePlugin } from './plugin.js';
/** The zod every plugin must describe its arguments with (the registry converts its schemas to JSON Schema). */
export { z } from 'zod';
export type { ConsentMode, ConsentGrant, ConsentSettings, ConsentStore, ConsentHookOptions } from './consent.js';
export {
  CONSENT_CATEGORIES,
  MAX_CONSENT_GRANTS,
  consentModeSchema,
  consentCategorySchema,
  consentGrantSchema,
  consentSettingsSchema,
  addConsentGrant,
  createConsentHook,
  createMemoryConsentStore,
} from './consent.js';
export { defineCommand, defineCapability } from './contract.js';
export type { InputJsonSchema, RegisteredCommand, RegistryChange, CommandFilter, Registry } from './registry.js';
export { RESERVED_COMMAND_PREFIX, createRegistry, isReservedCommandName } from './registry.js';
export type { ToolNameStyle } from './toolNames.js';
export { PORTABLE_TOOL_NAME, TOOL_NAME_STYLES, isToolNameStyle, toolNameIn, underscoreToolName } from './toolNames.js';
export type { AbortSignalLike, Invocation, InvocationOutcome, InvocationHook, InvokeOptions, InvokerOptions, Invoker } from './pipeline.js';
export { createInvoker } from './pipeline.js';
export { splitCommandLine, formatCommandLine, formatArgument } from './commandLine.js';
export type {
  ExecApprovalMode,
  ExecArgumentMatcher,
  ExecPattern,
  ExecTarget,
  ExecMatchOptions,
  ExecAllowlistScope,
  ExecAllowlistEntry,
  ExecApprovalPolicy,
  ExecVerdict,
  ExecApprovalStore,
} from './execPolicy.js';
export {
  MAX_ALLOWLIST_ENTRIES,
  DEFAULT_EXEC_APPROVAL_POLICY,
  execApprovalModeSchema,
  execApprovalPolicySchema,
  execPatternSchema,
  execAllowlistEntrySchema,
  parseExecPattern,
  matchesExecPattern,
  allowlistEntryCovers,
  isInsideCwdScope,
  toAllowlistScope,
  evaluateExecPolicy,
  updateExecApprovalPolicy,
  parseExecApprovalPolicy,
  createMemoryExecApprovalStore,
  execPolicyForMode,
} from './execPolicy.js';
export type {
  ApprovalDecision,
  ApprovalSettlement,
  ApprovalRequestInput,
  PendingApproval,
  ApprovalAnswer,
  AnsweredApproval,
  ApprovalEvent,
  ApprovalBrokerOptions,
  ApprovalBroker,
  ApprovalRequestOptions,
  ApprovalResolution,
  ApprovalWaitMode,
} from './approvalBroker.js';
export { createApprovalBroker, isApprovalDecision, isApprovalWaitMode } from './approvalBroker.js';
export { formatApprovalSummary, argsHashPrefix, ARGS_HASH_PREFIX_LENGTH, formatArgsForDisplay } from './approvalSummary.js';
export type { FormatArgsOptions } from './approvalSummary.js';
export type { ExecutableResolver, WorkingDirectoryResolver, ExecApprovalHookOptions, ExecDescription } from './execApprovalHook.js';
export { createExecApprovalHook, describeExecArgs } from './execApprovalHook.js';
export { hashInvocationArgs } from './internal/argsHash.js';
export type { ApprovalContext } from './internal/askApproval.js';
export { askApproval } from './internal/askApproval.js';
export type { ExecApprovalsCapabilityOptions } from './execApprovalsCapability.js';
export { createExecApprovalsCapability } from './execApprovalsCapability.js';
export { isRefusedEnvKey } from './envPolicy.js';
