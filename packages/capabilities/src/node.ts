import os from 'node:os';
import { createDeviceCapability } from './builtins/device.js';
import type { BuiltinOptions } from './builtins/options.js';
import { createSystemCapability } from './builtins/system.js';
import type { Capability } from './contract.js';
import { resolveWorkingDirectory } from './builtins/systemRun.js';
import type { ExecApprovalHookOptions } from './execApprovalHook.js';
import { createExecApprovalsCapability, type ExecApprovalsCapabilityOptions } from './execApprovalsCapability.js';
import { findExecutable } from './internal/which.js';

export type { BuiltinOptions } from './builtins/options.js';
export { createDeviceCapability } from './builtins/device.js';
export { createSystemCapability } from './builtins/system.js';
export { createSystemRunCommand, resolveWorkingDirectory, DEFAULT_RUN_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_BYTES } from './builtins/systemRun.js';
export type { SystemRunResult } from './builtins/systemRun.js';
export { createSystemRunPrepareCommand } from './builtins/systemRunPrepare.js';
export type { SystemRunPrepareOptions } from './builtins/systemRunPrepare.js';
export { createSystemWhichCommand } from './builtins/systemWhich.js';
export type { DesktopNotificationOptions } from './builtins/systemNotify.js';
export { createSystemNotifyCommand, showDesktopNotification } from './builtins/systemNotify.js';
export type { FindExecutableOptions } from './internal/which.js';
export { findExecutable } from './internal/which.js';

export interface BuiltinCapabilitiesOptions extends BuiltinOptions {
  /** Store and broker behind `system.execApprovals.get|set`. */
  readonly execApprovals: ExecApprovalsCapabilityOptions;
}

/**
 * Every built-in capability, ready to register: `device.info`, `device.status`, `system.which`,
 * `system.run`, `system.run.prepare`, `system.notify`, `system.execApprovals.get`, `system.execApprovals.set`.
 *
 * `system.run` is gated only when the invoker has the exec approval hook, so add it with the same
 * store and broker:
 *
 * @example
 * const store = createMemoryExecApprovalStore();
 * const broker = createApprovalBroker();
 * for (const capability of createBuiltinCapabilities({ execApprovals: { store, broker } })) registry.register(capability);
 * const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, ...createNodeExecResolvers() })] });
 */
export function createBuiltinCapabilities(options: BuiltinCapabilitiesOptions): Capability[] {
  return [createDeviceCapability(), createSystemCapability(options), createExecApprovalsCapability(options.execApprovals)];
}

/** Options of {@link createNodeExecResolvers}; give the same values as to the built-ins. */
export interface NodeExecResolversOptions {
  /** Where calls without cwd run, base of relative cwds. Default: the user's home directory. */
  readonly defaultCwd?: string;
  /** Environment whose PATH finds programs. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The program and working-directory resolvers the exec approval hook needs to see what
 * `system.run` will run: programs found as `system.run` finds them, cwds as real paths
 * (symlinks resolved), relative ones against the default directory (the user's home).
 *
 * @example createExecApprovalHook({ store, broker, ...createNodeExecResolvers() })
 */
export function createNodeExecResolvers(options: NodeExecResolversOptions = {}): Required<Pick<ExecApprovalHookOptions, 'resolveExecutable' | 'resolveCwd' | 'defaultCwd'>> {
  const defaultCwd = options.defaultCwd ?? os.homedir();
  return {
    resolveExecutable: (program, { cwd }) => findExecutable(program, { cwd: cwd ?? defaultCwd, ...(options.env ? { env: options.env } : {}) }),
    resolveCwd: (cwd) => resolveWorkingDirectory(cwd, defaultCwd),
    defaultCwd,
  };
}
