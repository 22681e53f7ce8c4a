import { CapabilityError, type Availability, type Capability, type CommandDefinition, type InvocationHook } from '@capnode/capabilities';
import { waitFor } from '@capnode/toolkit';
import type { UnavailableCommand } from '../../status/hostStatus.js';

export type { UnavailableCommand } from '../../status/hostStatus.js';

/** How long one command's availability probe may take at start before it counts as unavailable. */
export const DEFAULT_AVAILABILITY_TIMEOUT_MS = 5_000;

/** A command whose backend is missing here, and what to install for it. */

export interface ProbeOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * The host's record of unavailable commands. {@link AvailabilityGate.probe} runs each command's
 * `availability` probe once and returns the capability with every unavailable command replaced: it
 * stays listed locally, is `localOnly` (never declared to a gateway), and fails with `unavailable`
 * ("unavailable here: install <what>"); the gate's hook refuses it before consent or approval asks anyone.
 */
export interface AvailabilityGate {
  readonly hook: InvocationHook;
  probe(capability: Capability, options?: ProbeOptions): Promise<{ readonly capability: Capability; readonly unavailable: readonly UnavailableCommand[] }>;
}

export function unavailableError(install: string): CapabilityError {
  return new CapabilityError('unavailable', `unavailable here: install ${install}`, { data: { install } });
}

async function runProbe(definition: CommandDefinition, options: ProbeOptions): Promise<Availability> {
  const probe = definition.availability;
  if (!probe) return { available: true };
  const timeoutMs = options.timeoutMs ?? DEFAULT_AVAILABILITY_TIMEOUT_MS;
  const timedOut = new DOMException('availability probe timed out', 'TimeoutError');
  try {
    const result = await waitFor(async (signal) => probe({ signal }), { timeoutMs, timeoutReason: () => timedOut, unref: true, ...(options.signal ? { signal: options.signal } : {}) });
    if (result && typeof result === 'object' && (result.available === true || (result.available === false && typeof result.install === 'string'))) return result;
    return { available: false, install: `the backend of ${definition.name} (its availability check gave no answer)` };
  } catch (error) {
    if (error === timedOut) return { available: false, install: `the backend of ${definition.name} (its availability check did not answer within ${timeoutMs} ms)` };
    return { available: false, install: `the backend of ${definition.name} (its availability check failed: ${(error as Error)?.message ?? String(error)})` };
  }
}

/** Creates the availability gate installed first in the host pipeline. */
export function createAvailabilityGate(): AvailabilityGate {
  const missing = new WeakMap<CommandDefinition, string>();
  return {
    hook: {
      beforeInvoke(invocation) {
        const install = missing.get(invocation.command.definition);
        if (install !== undefined) throw unavailableError(install);
      },
    },
    async probe(capability, options = {}) {
      const results = await Promise.all(capability.commands.map((definition) => runProbe(definition, options)));
      const unavailable: UnavailableCommand[] = [];
      const commands = capability.commands.map((definition, index) => {
        const result = results[index]!;
        if (result.available) return definition;
        unavailable.push({ command: definition.name, install: result.install });
        const wrapped: CommandDefinition = {
          ...definition,
          localOnly: true,
          execute: () => {
            throw unavailableError(result.install);
          },
        };
        missing.set(wrapped, result.install);
        return wrapped;
      });
      return { capability: unavailable.length === 0 ? capability : { ...capability, commands }, unavailable };
    },
  };
}
