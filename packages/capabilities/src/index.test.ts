import { describe, expect, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/capabilities entries', () => {
  it('the root entry is runtime-neutral: zod and the toolkit root only, no Node built-ins, no other sibling package', () => {
    expectImports('index.ts', (specifier) => specifier === 'zod' || specifier === '@capnode/toolkit');
  });

  it('the /node entry loads no sibling package but the toolkit', () => {
    expectImports('node.ts', (specifier) => specifier === 'zod' || specifier.startsWith('node:') || specifier === '@capnode/toolkit');
  });

  it('the /display entry has no dependencies', () => {
    expectImports('display.ts', () => false);
  });

  it('the root entry exports exactly the documented runtime API', () =>
    expectExports('index.ts', [
      'ARGS_HASH_PREFIX_LENGTH',
      'CONSENT_CATEGORIES',
      'CapabilityError',
      'DEFAULT_EXEC_APPROVAL_POLICY',
      'MAX_ALLOWLIST_ENTRIES',
      'MAX_CONSENT_GRANTS',
      'PORTABLE_TOOL_NAME',
      'RESERVED_COMMAND_PREFIX',
      'TOOL_NAME_STYLES',
      'addConsentGrant',
      'allowlistEntryCovers',
      'argsHashPrefix',
      'askApproval',
      'audio',
      'consentCategorySchema',
      'consentGrantSchema',
      'consentModeSchema',
      'consentSettingsSchema',
      'createApprovalBroker',
      'createConsentHook',
      'createExecApprovalHook',
      'createExecApprovalsCapability',
      'createInvoker',
      'createMemoryConsentStore',
      'createMemoryExecApprovalStore',
      'createRegistry',
      'defineCapability',
      'defineCommand',
      'definePlugin',
      'describeExecArgs',
      'evaluateExecPolicy',
      'execAllowlistEntrySchema',
      'execApprovalModeSchema',
      'execApprovalPolicySchema',
      'execPatternSchema',
      'execPolicyForMode',
      'fail',
      'formatApprovalSummary',
      'formatArgsForDisplay',
      'formatArgument',
      'formatCommandLine',
      'hashInvocationArgs',
      'image',
      'isApprovalDecision',
      'isApprovalWaitMode',
      'isCapabilityError',
      'isInsideCwdScope',
      'isRefusedEnvKey',
      'isReservedCommandName',
      'isToolNameStyle',
      'json',
      'matchesExecPattern',
      'parseExecApprovalPolicy',
      'parseExecPattern',
      'resource',
      'splitCommandLine',
      'text',
      'toAllowlistScope',
      'toCommandResult',
      'toolNameIn',
      'underscoreToolName',
      'updateExecApprovalPolicy',
      'z',
    ]));

  it('the /node entry exports exactly the documented runtime API', () =>
    expectExports('node.ts', [
      'DEFAULT_MAX_OUTPUT_BYTES',
      'DEFAULT_RUN_TIMEOUT_MS',
      'createBuiltinCapabilities',
      'createDeviceCapability',
      'createNodeExecResolvers',
      'createSystemCapability',
      'createSystemNotifyCommand',
      'createSystemRunCommand',
      'createSystemRunPrepareCommand',
      'createSystemWhichCommand',
      'findExecutable',
      'resolveWorkingDirectory',
      'showDesktopNotification',
    ]));

  it('the /display entry exports exactly the documented runtime API', () =>
    expectExports('display.ts', [
      'escapeForDisplay',
      'hasInvisibleCharacters',
    ]));

  it('the /pack entry lists the built-in plugins (the pack helpers add theirs)', async () => {
    const entry = await import('./pack.js');
    expect(Object.keys(entry)).toContain('builtinPlugins');
    for (const { name, plugin } of entry.builtinPlugins) {
      expect(typeof name).toBe('string');
      expect(['function', 'object']).toContain(typeof plugin);
    }
  });
});
