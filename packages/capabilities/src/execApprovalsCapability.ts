import { z } from 'zod';
import type { ApprovalBroker } from './approvalBroker.js';
import { json } from './content.js';
import { defineCapability, defineCommand, type Capability, type Transport } from './contract.js';
import { CapabilityError } from './errors.js';
import { execApprovalModeSchema, execPatternSchema, MAX_ALLOWLIST_ENTRIES, parseExecApprovalPolicy, type ExecApprovalPolicy, type ExecApprovalStore } from './execPolicy.js';
import { askApproval } from './internal/askApproval.js';

export interface ExecApprovalsCapabilityOptions {
  readonly store: ExecApprovalStore;
  readonly broker: ApprovalBroker;
  /**
   * Transports whose callers change the policy without being asked: the user's own process
   * (`internal`: the host itself, `cli`: an in-process CLI). Default `['internal', 'cli']`.
   * MCP and gateway callers are agents, so their changes ask the user unless the mode is `full`.
   */
  readonly trustedTransports?: readonly Transport[];
}

const setInput = z
  .object({
    mode: execApprovalModeSchema.optional().describe("New mode: 'deny', 'ask', 'allowlist' or 'full'."),
    allowlist: z.array(execPatternSchema).max(MAX_ALLOWLIST_ENTRIES).optional().describe('Replaces the allowlist.'),
    add: z.array(execPatternSchema).max(MAX_ALLOWLIST_ENTRIES).optional().describe('Patterns appended to the allowlist (duplicates ignored).'),
    remove: z.array(z.string()).max(MAX_ALLOWLIST_ENTRIES).optional().describe('Patterns removed from the allowlist.'),
  })
  .strict()
  .refine((value) => Object.values(value).some((part) => part !== undefined), { message: 'Give at least one of mode, allowlist, add, remove.' });

function describeChange(before: ExecApprovalPolicy, after: ExecApprovalPolicy): string {
  const parts: string[] = [];
  if (before.mode !== after.mode) parts.push(`mode ${before.mode} → ${after.mode}`);
  const added = after.allowlist.filter((p) => !before.allowlist.includes(p));
  const removed = before.allowlist.filter((p) => !after.allowlist.includes(p));
  if (added.length) parts.push(`allow ${added.map((p) => `'${p}'`).join(', ')}`);
  if (removed.length) parts.push(`remove ${removed.map((p) => `'${p}'`).join(', ')}`);
  return parts.length ? `change exec approvals: ${parts.join('; ')}` : 'exec approvals unchanged';
}

/**
 * `system.execApprovals.get` and `system.execApprovals.set`, reading and writing through `store`.
 *
 * Both are served to gateways as well (parity with the node command surface). Because a policy
 * change is a privilege change, `set` from an untrusted transport (MCP, gateway) goes through the
 * approval broker (the user is asked; `allow-always` counts as once) unless the current mode is
 * already `full`, where it grants nothing new.
 */
export function createExecApprovalsCapability(options: ExecApprovalsCapabilityOptions): Capability {
  const { store, broker } = options;
  const trusted = new Set<Transport>(options.trustedTransports ?? ['internal', 'cli']);
  return defineCapability({
    category: 'system',
    commands: [
      defineCommand({
        name: 'system.execApprovals.get',
        description: "Shows the exec approval policy for system.run: mode ('deny', 'ask', 'allowlist', 'full') and allowlist patterns.",
        annotations: { title: 'Get exec approvals', readOnly: true, idempotent: true },
        input: z.object({}),
        async execute() {
          const policy = parseExecApprovalPolicy(await store.get());
          return json({ mode: policy.mode, allowlist: [...policy.allowlist] });
        },
      }),
      defineCommand({
        name: 'system.execApprovals.set',
        description:
          "Changes the exec approval policy for system.run. Modes: 'deny' (nothing runs), 'ask' (allowlisted commands run, others ask the user), 'allowlist' (only allowlisted commands run), 'full' (everything runs). Patterns: '<program> [argument glob]' where '*' matches anything, e.g. 'git status*', 'npm *', '/usr/bin/ls'. Unless the mode is 'full', the user is asked to approve the change.",
        annotations: { title: 'Set exec approvals', destructive: true, idempotent: true },
        input: setInput,
        async execute(args, ctx) {
          const current = parseExecApprovalPolicy(await store.get());
          let allowlist = args.allowlist ?? [...current.allowlist];
          if (args.remove) {
            const removed = new Set(args.remove.map((p) => p.trim()));
            allowlist = allowlist.filter((p) => !removed.has(p));
          }
          for (const pattern of args.add ?? []) if (!allowlist.includes(pattern)) allowlist.push(pattern);
          const next = parseExecApprovalPolicy({ mode: args.mode ?? current.mode, allowlist: [...new Set(allowlist)] });
          const summary = describeChange(current, next);
          const changed = summary !== 'exec approvals unchanged';
          if (changed && current.mode !== 'full' && !trusted.has(ctx.request.transport)) {
            await askApproval(
              broker,
              {
                command: 'system.execApprovals.set',
                commandLine: summary,
                summary,
                ...(ctx.request.caller === undefined ? {} : { caller: ctx.request.caller }),
                transport: ctx.request.transport,
              },
              'system.execApprovals.set',
              ctx.signal,
            );
          }
          if (changed) {
            try {
              await store.set(next);
            } catch (error) {
              throw new CapabilityError('failed', 'The exec approval policy could not be saved.', { cause: error });
            }
          }
          return json({ mode: next.mode, allowlist: [...next.allowlist], changed });
        },
      }),
    ],
  });
}
