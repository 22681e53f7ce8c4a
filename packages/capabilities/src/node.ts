import { createDeviceCapability } from './builtins/device.js';
import type { BuiltinOptions } from './builtins/options.js';
import { createSystemCapability } from './builtins/system.js';
import type { Capability } from './contract.js';
import { createExecApprovalsCapability, type ExecApprovalsCapabilityOptions } from './execApprovalsCapability.js';

export type { BuiltinOptions } from './builtins/options.js';
export { createDeviceCapability } from './builtins/device.js';
export { createSystemCapability } from './builtins/system.js';
export { createSystemRunCommand, DEFAULT_RUN_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_BYTES } from './builtins/systemRun.js';
export type { SystemRunResult } from './builtins/systemRun.js';
export { createSystemWhichCommand } from './builtins/systemWhich.js';
export type { DesktopNotificationOptions } from './builtins/systemNotify.js';
export { createSystemNotifyCommand, showDesktopNotification } from './builtins/systemNotify.js';
export type { FindExecutableOptions } from './internal/which.js';
export { findExecutable } from './internal/which.js';
export { truncationMarker } from './internal/runProcess.js';

export interface BuiltinCapabilitiesOptions extends BuiltinOptions {
  /** Store and broker behind `system.execApprovals.get|set`. */
  readonly execApprovals: ExecApprovalsCapabilityOptions;
}

/**
 * Every built-in capability, ready to register: `device.info`, `device.status`, `system.which`,
 * `system.run`, `system.notify`, `system.execApprovals.get`, `system.execApprovals.set`.
 *
 * `system.run` is gated only when the invoker has the exec approval hook, so add it with the same
 * store and broker:
 *
 * @example
 * const store = createMemoryExecApprovalStore();
 * const broker = createApprovalBroker();
 * for (const capability of createBuiltinCapabilities({ execApprovals: { store, broker } })) registry.register(capability);
 * const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, resolveExecutable: findExecutable })] });
 */
export function createBuiltinCapabilities(options: BuiltinCapabilitiesOptions): Capability[] {
  return [createDeviceCapability(), createSystemCapability(options), createExecApprovalsCapability(options.execApprovals)];
}
