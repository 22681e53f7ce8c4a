import { defineCapability, type Capability } from '../contract.js';
import type { BuiltinOptions } from './options.js';
import { createSystemNotifyCommand } from './systemNotify.js';
import { createSystemRunCommand } from './systemRun.js';
import { createSystemWhichCommand } from './systemWhich.js';

/** `system.which`, `system.run` and `system.notify`. `system.run` needs the exec approval hook on the invoker. */
export function createSystemCapability(options: BuiltinOptions = {}): Capability {
  return defineCapability({
    category: 'system',
    commands: [createSystemWhichCommand(options), createSystemRunCommand(options), createSystemNotifyCommand(options)],
  });
}
