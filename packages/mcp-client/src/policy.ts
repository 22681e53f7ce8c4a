import { CapabilityError, type InvocationHook } from '@capnode/capabilities';
import type { RiskProfile } from './config.js';
import { NAME_SEPARATOR } from './naming.js';

/** Authorization (may the agent call it at all) and approval (must a human say yes first) for tool names. */
export interface ToolPolicy {
  /** False when the tool is outside the agent's capability boundary; such tools are hidden and refused. */
  isAuthorized(name: string): boolean;
  /** True when a call must be approved first. */
  needsApproval(name: string): boolean;
  readonly profile: RiskProfile;
}

export interface ToolPolicyOptions {
  /**
   * A caller-supplied per-run allow-list (a cron job narrowing itself): a strict intersection with the
   * profile, with no automatic admission of `<server>__<tool>` names.
   */
  readonly runAllowList?: readonly string[];
}

function matcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  let all = false;
  for (const pattern of patterns) {
    const lower = pattern.toLowerCase();
    if (lower === '*') all = true;
    else if (lower.endsWith('*')) prefixes.push(lower.slice(0, -1));
    else exact.add(lower);
  }
  return (name) => {
    if (all) return true;
    const lower = name.toLowerCase();
    return exact.has(lower) || prefixes.some((prefix) => lower.startsWith(prefix));
  };
}

/**
 * Applies a risk profile to imported MCP tool names. Entries match exact names (case-insensitively),
 * `*`, or a `prefix*`.
 *
 * Authorization: `denyAllTools` refuses everything; `excludedTools` always subtracts; a non-empty
 * `allowedTools` admits its entries plus every `<server>__<tool>` name; an empty one is unrestricted;
 * `read_only` autonomy refuses MCP calls; a per-run allow-list must also match, without auto-admission.
 * Approval: `alwaysAsk` wins over everything; `full` autonomy asks nothing else; otherwise only
 * `autoApprove` entries skip the question. Decisions go by names alone: a server's tool annotations
 * (`readOnlyHint`, `destructiveHint`, …) never relax them, trusted server or not.
 */
export function createToolPolicy(profile: RiskProfile, options: ToolPolicyOptions = {}): ToolPolicy {
  const allowed = matcher(profile.allowedTools);
  const excluded = matcher(profile.excludedTools);
  const autoApprove = matcher(profile.autoApprove);
  const alwaysAsk = matcher(profile.alwaysAsk);
  const runList = options.runAllowList ? matcher(options.runAllowList) : undefined;
  return {
    profile,
    isAuthorized(name) {
      if (profile.denyAllTools || profile.autonomy === 'read_only') return false;
      if (excluded(name)) return false;
      if (runList && !runList(name)) return false;
      if (profile.allowedTools.length > 0 && !allowed(name) && !name.includes(NAME_SEPARATOR)) return false;
      return true;
    },
    needsApproval(name) {
      if (alwaysAsk(name)) return true;
      if (profile.autonomy === 'full') return false;
      return !autoApprove(name);
    },
  };
}

/** What an approver is asked. */
export interface ApprovalRequest {
  /** Exposed tool name, `<server>__<tool>`. */
  readonly name: string;
  readonly server: string;
  /** The tool's own name on its server. */
  readonly tool: string;
  readonly args: unknown;
  /** Aborted when the call is cancelled or times out; stop asking then. */
  readonly signal: AbortSignal;
}

/** Answers an approval question; `true` lets the call run. */
export type Approver = (request: ApprovalRequest) => boolean | Promise<boolean>;

export interface PolicyHookOptions {
  readonly policy: ToolPolicy;
  /** Finds the MCP tool behind a command name; other commands pass the hook untouched. */
  readonly lookup: (name: string) => { readonly server: string; readonly tool: string } | undefined;
  /** Asked when the policy wants approval; without one such calls are refused. */
  readonly approve?: Approver;
}

/**
 * The invocation-pipeline hook that enforces a {@link ToolPolicy} on imported tools: unauthorized
 * calls and refused approvals fail with `denied` before anything reaches the server.
 */
export function createPolicyHook(options: PolicyHookOptions): InvocationHook {
  const { policy, lookup, approve } = options;
  return {
    // Synchronous unless an approver is asked: no promise on the common path of every call.
    beforeInvoke(invocation) {
      const name = invocation.command.name;
      const target = lookup(name);
      if (!target) return;
      if (!policy.isAuthorized(name)) throw new CapabilityError('denied', `${name} is not allowed by this agent's risk profile.`);
      if (!policy.needsApproval(name)) return;
      if (!approve) throw new CapabilityError('denied', `${name} needs approval and no approver is configured (add it to auto_approve to allow it without asking).`);
      return Promise.resolve(approve({ name, server: target.server, tool: target.tool, args: invocation.args, signal: invocation.signal })).then((approved) => {
        if (!approved) throw new CapabilityError('denied', `${name} was not approved.`);
      });
    },
  };
}
