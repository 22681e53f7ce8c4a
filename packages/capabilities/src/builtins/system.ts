import { defineCapability, type Capability } from '../contract.js';
import type { ExecApprovalStore } from '../execPolicy.js';
import type { BuiltinOptions } from './options.js';
import { createSystemNotifyCommand } from './systemNotify.js';
import { createSystemRunCommand } from './systemRun.js';
import { createSystemRunPrepareCommand } from './systemRunPrepare.js';
import { createSystemWhichCommand } from './systemWhich.js';

/**
 * `system.which`, `system.run`, `system.run.prepare` and `system.notify`. `system.run` needs the exec
 * approval hook on the invoker; give `execApprovals.store` so `system.run.prepare` reports the policy.
 */
export function createSystemCapability(options: BuiltinOptions & { readonly execApprovals?: { readonly store: ExecApprovalStore } } = {}): Capability {
  return defineCapability({
    category: 'system',
    commands: [
      createSystemWhichCommand(options),
      createSystemRunCommand(options),
      createSystemRunPrepareCommand({ ...options, ...(options.execApprovals ? { store: options.execApprovals.store } : {}) }),
      createSystemNotifyCommand(options),
    ],
  });
}
