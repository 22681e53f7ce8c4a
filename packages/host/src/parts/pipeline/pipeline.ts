import {
  createApprovalBroker,
  createConsentHook,
  createExecApprovalHook,
  createInvoker,
  createRegistry,
  formatArgsForDisplay,
  type ApprovalBroker,
  type Capability,
  type InvocationHook,
  type Invoker,
  type Registry,
} from '@capnode/capabilities';
import { createBuiltinCapabilities, createNodeExecResolvers } from '@capnode/capabilities/node';
import { createMcpToolsSlot, type ApprovalRequest } from '@capnode/mcp-client';
import { createSecretScrubber, scrubAndCap } from '@capnode/mcp-client/redact';
import type { LogLevel } from '@capnode/toolkit';
import { createAuditLog, type AuditLog, type AuditLogOptions } from '../../audit/audit.js';
import type { HostPaths } from '../../config/paths.js';
import type { SettingsStore } from '../../config/settings.js';
import { createAvailabilityGate, type AvailabilityGate } from './pluginsAvailability.js';

export type PipelineLogLevel = LogLevel;

export interface HostPipelineOptions {
  /** The config directory's files (`audit.log` is written there). */
  readonly paths: HostPaths;
  /** The exec approval policy is read from and "allow always" written to these settings. */
  readonly settings: SettingsStore;
  /** Register the built-in capabilities (device, system). Default true. */
  readonly builtins?: boolean;
  /** More capabilities (plugins, the gateway channel tools, tests). */
  readonly capabilities?: readonly Capability[];
  /** How long an approval waits for an answer before it counts as denied. Default 120 s. */
  readonly approvalTimeoutMs?: number;
  /** How often a call waiting for approval reports progress, instead of `approvals.progressIntervalMs` (default 5 s). */
  readonly approvalProgressIntervalMs?: number;
  /** Audit log tuning (rotation size, file count, queue); the path is always `paths.auditLog`. */
  readonly audit?: Omit<AuditLogOptions, 'path' | 'onError'>;
  readonly log: (level: PipelineLogLevel, message: string) => void;
}

/**
 * The one invocation pipeline of this machine: the registry, the approval broker, and the invoker
 * whose hook slots are fixed here, in this order (`invoker.hooks` names them):
 * `availability` (commands whose backend is missing fail before anyone is asked), `consent`,
 * `exec-approval`, `mcp-tools` (the imported tools' risk profile and approvals, bound by the MCP
 * client runtime given this invoker) and `audit` last, so it records every refusal's outcome. The
 * host serves it on every transport; CLI commands that run calls in their own process
 * (`capnode mcp channel`, direct calls to imported MCP servers) build the same one.
 */
export interface HostPipeline {
  readonly registry: Registry;
  readonly invoker: Invoker;
  readonly approvals: ApprovalBroker;
  readonly audit: AuditLog;
  /** Which commands are unavailable here (their backend is missing); they fail with `unavailable` before any consent or approval. */
  readonly availability: AvailabilityGate;
  /** Denies pending approvals and flushes the audit log. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Composes the {@link HostPipeline}. Nothing runs until `invoker.invoke`. */
export function createHostPipeline(options: HostPipelineOptions): HostPipeline {
  const { paths, settings, log } = options;
  const registry = createRegistry();
  // Wait mode and elicitation are read per request, so a settings edit applies to the next call.
  const approvals = createApprovalBroker({
    ...(options.approvalTimeoutMs === undefined ? {} : { timeoutMs: options.approvalTimeoutMs }),
    waitMode: () => settings.get().approvals.wait,
    elicitation: () => settings.get().approvals.elicit,
    holdMs: () => settings.get().approvals.holdMs,
    progressIntervalMs: options.approvalProgressIntervalMs ?? settings.get().approvals.progressIntervalMs,
    // A settings change between an answer and its retry (a stricter policy, even deny and back) discards the answer.
    policyRevision: () => settings.revision(),
  });
  const availability = createAvailabilityGate();
  const audit = createAuditLog({ ...options.audit, path: paths.auditLog, onError: (error) => log('error', `audit log ${paths.auditLog}: ${error.message}`) });
  const invoker = createInvoker({
    registry,
    // Unavailable commands fail before anyone is asked; consent before exec approval; the imported
    // tools' policy is filled in by the MCP client runtime; audit last, so it sees every refusal.
    hooks: [
      slot('availability', availability.hook),
      slot('consent', createConsentHook({ store: settings.consent, broker: approvals })),
      slot('exec-approval', createExecApprovalHook({ store: settings.execApprovals, broker: approvals, ...createNodeExecResolvers() })),
      createMcpToolsSlot(),
      slot('audit', audit.hook),
    ],
    onInternalError: (error, request) => log('error', `${request.command} failed internally: ${(error as Error)?.stack ?? String(error)}`),
  });
  if (options.builtins !== false) {
    for (const capability of createBuiltinCapabilities({ execApprovals: { store: settings.execApprovals, broker: approvals } })) registry.register(capability);
  }
  for (const capability of options.capabilities ?? []) registry.register(capability);
  let closing: Promise<void> | undefined;
  const pipeline: HostPipeline = {
    registry,
    invoker,
    approvals,
    audit,
    availability,
    close() {
      closing ??= (async () => {
        await approvals.close();
        await audit.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => pipeline.close(),
  };
  return pipeline;
}

/** `hook` under a slot name (the hooks' methods do not use `this`). */
function slot(name: string, hook: InvocationHook): InvocationHook {
  return { ...hook, name };
}

/** Longest argument text an approval request for an imported tool shows. */
const MAX_APPROVAL_ARGS = 1000;
const scrubArgs = createSecretScrubber();

/**
 * The arguments of an imported tool call as an approval shows them: each string scrubbed of
 * credential shapes, then shortened so no long value hides another (`formatArgsForDisplay`: a
 * padded path still shows its end), then scrubbed and cut once more as a whole.
 */
export function describeToolArgs(args: unknown): string {
  const text = formatArgsForDisplay(args, { maxChars: MAX_APPROVAL_ARGS, mapString: (value) => scrubAndCap(value, scrubArgs, Number.MAX_SAFE_INTEGER) });
  return scrubAndCap(text, scrubArgs, MAX_APPROVAL_ARGS + 64);
}

/**
 * Asks the broker whether an imported MCP tool may run (the risk profile did not auto-approve it):
 * the same question the host and the CLI put, answered by whoever answers that broker.
 */
export function requestToolApproval(approvals: ApprovalBroker, request: ApprovalRequest): ReturnType<ApprovalBroker['request']> {
  const args = describeToolArgs(request.args);
  return approvals.request(
    {
      command: request.name,
      commandLine: `${request.name} ${args}`,
      summary: `${request.name} (tool '${request.tool}' of MCP server '${request.server}') wants to run with ${args}`,
    },
    { signal: request.signal },
  );
}
