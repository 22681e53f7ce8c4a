import { z } from 'zod';
import type { ApprovalBroker } from './approvalBroker.js';
import { json } from './content.js';
import { defineCapability, defineCommand, type Capability, type Transport } from './contract.js';
import { maskEnvForDisplay } from './envPolicy.js';
import { CapabilityError } from './errors.js';
import {
  codeLoadingEnvKeys,
  execAllowlistEntrySchema,
  execApprovalModeSchema,
  MAX_ALLOWLIST_ENTRIES,
  parseExecApprovalPolicy,
  sameAllowlistEntry,
  toAllowlistScope,
  updateExecApprovalPolicy,
  type ExecAllowlistEntry,
  type ExecApprovalMode,
  type ExecApprovalPolicy,
  type ExecApprovalStore,
} from './execPolicy.js';
import { hashInvocationArgs } from './internal/argsHash.js';
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
    allowlist: z.array(execAllowlistEntrySchema).max(MAX_ALLOWLIST_ENTRIES).optional().describe('Replaces the allowlist.'),
    add: z.array(execAllowlistEntrySchema).max(MAX_ALLOWLIST_ENTRIES).optional().describe('Entries appended to the allowlist (duplicates ignored).'),
    remove: z
      .array(z.union([z.string(), execAllowlistEntrySchema]))
      .max(MAX_ALLOWLIST_ENTRIES)
      .optional()
      .describe('Entries removed from the allowlist; a string removes every entry with that pattern.'),
  })
  .strict()
  .refine((value) => Object.values(value).some((part) => part !== undefined), { message: 'Give at least one of mode, allowlist, add, remove.' });

type SetInput = z.output<typeof setInput>;

/** What one `set` asks for, independent of the policy it will be applied to. */
interface PolicyDelta {
  readonly mode?: ExecApprovalMode;
  readonly allowlist?: readonly ExecAllowlistEntry[];
  readonly add: readonly ExecAllowlistEntry[];
  readonly remove: readonly ExecAllowlistEntry[];
}

function toDelta(args: SetInput): PolicyDelta {
  const policy = parseExecApprovalPolicy({ allowlist: [...(args.allowlist ?? []), ...(args.add ?? [])] });
  const replaced = args.allowlist ? policy.allowlist.slice(0, args.allowlist.length) : undefined;
  return {
    ...(args.mode === undefined ? {} : { mode: args.mode }),
    ...(replaced === undefined ? {} : { allowlist: replaced }),
    add: policy.allowlist.slice(args.allowlist?.length ?? 0),
    remove: (args.remove ?? []).map((entry) => (typeof entry === 'string' ? entry.trim() : parseExecApprovalPolicy({ allowlist: [entry] }).allowlist[0]!)),
  };
}

function removes(removal: ExecAllowlistEntry, entry: ExecAllowlistEntry): boolean {
  return typeof removal === 'string' ? toAllowlistScope(entry).pattern.trim() === removal : sameAllowlistEntry(removal, entry);
}

function sameAllowlist(a: readonly ExecAllowlistEntry[], b: readonly ExecAllowlistEntry[]): boolean {
  return a.length === b.length && a.every((entry, index) => sameAllowlistEntry(entry, b[index]!));
}

/**
 * Applies `delta` to `current`. `base` is the policy the user was shown: a mode change or an
 * allowlist replacement computed against it is refused when that part changed meanwhile, so
 * approving never restores a weaker mode (or removed entries) that a later change replaced.
 */
function applyDelta(current: ExecApprovalPolicy, delta: PolicyDelta, base: ExecApprovalPolicy): ExecApprovalPolicy {
  const conflict = (what: string) =>
    new CapabilityError('failed', `Nothing was changed: the exec approval ${what} changed while this change waited for approval; read the policy again and retry.`, {
      data: { reason: 'policy_changed' },
    });
  let mode = current.mode;
  if (delta.mode !== undefined && delta.mode !== current.mode) {
    if (current.mode !== base.mode) throw conflict('mode');
    mode = delta.mode;
  }
  let allowlist = [...current.allowlist];
  if (delta.allowlist) {
    if (!sameAllowlist(current.allowlist, base.allowlist)) throw conflict('allowlist');
    allowlist = [...delta.allowlist];
  }
  allowlist = allowlist.filter((entry) => !delta.remove.some((removal) => removes(removal, entry)));
  for (const entry of delta.add) if (!allowlist.some((existing) => sameAllowlistEntry(existing, entry))) allowlist.push(entry);
  return { mode, allowlist };
}

function describeEntry(entry: ExecAllowlistEntry): string {
  const scope = toAllowlistScope(entry);
  // Values (and keys that are not plain names) JSON-quoted: a value with spaces or commas cannot pass for more entries.
  const env = scope.env ? Object.entries(maskEnvForDisplay(scope.env)).map(([key, value]) => `${/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key)}=${JSON.stringify(value)}`) : [];
  return `'${scope.pattern}'${scope.cwd === undefined ? '' : ` in ${JSON.stringify(scope.cwd)}`}${env.length ? ` with env ${env.join(' ')}` : ''}`;
}

function describeChange(before: ExecApprovalPolicy, after: ExecApprovalPolicy): string {
  const parts: string[] = [];
  if (before.mode !== after.mode) parts.push(`mode ${before.mode} → ${after.mode}`);
  const added = after.allowlist.filter((entry) => !before.allowlist.some((existing) => sameAllowlistEntry(existing, entry)));
  const removed = before.allowlist.filter((entry) => !after.allowlist.some((existing) => sameAllowlistEntry(existing, entry)));
  if (added.length) parts.push(`allow ${added.map(describeEntry).join(', ')}`);
  if (removed.length) parts.push(`remove ${removed.map(describeEntry).join(', ')}`);
  return parts.length ? `change exec approvals: ${parts.join('; ')}` : 'exec approvals unchanged';
}

/** True when the change can only take permissions away, or grants nothing the mode does not already. */
function grantsNothing(before: ExecApprovalPolicy, after: ExecApprovalPolicy): boolean {
  if (before.mode !== 'full' || after.mode !== 'full') return false;
  // Even in mode `full`, code-loading variables need the user: an entry recording them is a grant.
  return after.allowlist.every((entry) => codeLoadingEnvKeys(toAllowlistScope(entry).env).length === 0 || before.allowlist.some((existing) => sameAllowlistEntry(existing, entry)));
}

/**
 * `system.execApprovals.get` and `system.execApprovals.set`, reading and writing through `store`.
 *
 * Both are served to gateways as well (parity with the gateway node command surface). Because a
 * policy change is a privilege change, `set` from an untrusted transport (MCP, gateway) goes through
 * the approval broker (the user is asked; `allow-always` counts as once) unless the mode is `full`
 * before and after and no entry with code-loading variables is added. An approved change is applied
 * as a delta (mode, replacement, additions, removals) to the policy current at approval time: a
 * mode change or replacement whose starting point changed while the prompt was open is refused
 * (`failed`, `data.reason: 'policy_changed'`), so it never restores a weaker mode.
 */
export function createExecApprovalsCapability(options: ExecApprovalsCapabilityOptions): Capability {
  const { store, broker } = options;
  const trusted = new Set<Transport>(options.trustedTransports ?? ['internal', 'cli']);
  return defineCapability({
    category: 'system',
    commands: [
      defineCommand({
        name: 'system.execApprovals.get',
        description:
          "Shows the exec approval policy for system.run: mode ('deny', 'ask', 'allowlist', 'full') and allowlist entries (a pattern, or { pattern, cwd, env }).",
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
          "Changes the exec approval policy for system.run. Modes: 'deny' (nothing runs), 'ask' (allowlisted commands run, others ask the user), 'allowlist' (only allowlisted commands run), 'full' (everything runs). Entries: a pattern '<program> <arg> …' where each token matches one argument exactly, a whole '*' token matches one argument and a last '*' any further arguments (e.g. 'git status *', 'npm *', '/usr/bin/ls'); or { pattern, cwd, env } to allow it inside a directory and with exact variables. Unless the mode is 'full', the user is asked to approve the change.",
        annotations: { title: 'Set exec approvals', destructive: true, idempotent: true },
        input: setInput,
        async execute(args, ctx) {
          const delta = toDelta(args);
          const base = parseExecApprovalPolicy(await store.get());
          const preview = parseExecApprovalPolicy(applyDelta(base, delta, base));
          const summary = describeChange(base, preview);
          if (summary === 'exec approvals unchanged') return json({ mode: base.mode, allowlist: [...base.allowlist], changed: false });
          if (!grantsNothing(base, preview) && !trusted.has(ctx.request.transport)) {
            await askApproval(
              broker,
              {
                command: 'system.execApprovals.set',
                commandLine: summary,
                summary,
                // Bound to the policy the summary was computed from: a retry after the policy changed
                // (e.g. to 'deny') is a new request, never answered by the approval of the old one.
                argsHash: await hashInvocationArgs('system.execApprovals.set', { args, base }),
                ...(ctx.request.caller === undefined ? {} : { caller: ctx.request.caller }),
                ...(ctx.request.client === undefined ? {} : { client: ctx.request.client }),
                transport: ctx.request.transport,
              },
              'system.execApprovals.set',
              // The whole call, so a caller that shows progress (the CLI) waits like system.run does.
              ctx,
            );
          }
          let next: ExecApprovalPolicy;
          try {
            next = await updateExecApprovalPolicy(store, (current) => applyDelta(current, delta, base));
          } catch (error) {
            if (error instanceof CapabilityError) throw error;
            throw new CapabilityError('failed', 'The exec approval policy could not be saved.', { cause: error });
          }
          return json({ mode: next.mode, allowlist: [...next.allowlist], changed: true });
        },
      }),
    ],
  });
}
