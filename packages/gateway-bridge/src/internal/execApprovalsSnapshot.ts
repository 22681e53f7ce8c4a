import { execPolicyForMode, type ExecAllowlistEntry, type ExecApprovalMode, type ExecApprovalPolicy, type InvocationOutcome } from '@capnode/capabilities';
import { argumentsHash } from '@capnode/protocol';
import { defineErrorClass, isPlainObject } from '@capnode/toolkit';

/**
 * The exec approvals route of OpenClaw gateways (`exec.approvals.node.get|set`, CLI `openclaw
 * approvals get|set --node <id>`). The gateway refuses `node.invoke` of `system.execApprovals.*`
 * and calls them itself: `system.execApprovals.get` with `{}`, `system.execApprovals.set` with
 * `{ file, baseHash }` (or `{ defaultAction, rules, baseHash }` for host-native policies), and
 * validates the answer as a node approvals snapshot. capnode answers the file-backed snapshot
 * (`{ path, exists, hash, file: { version: 1, defaults, agents: { '*': { allowlist } } } }`)
 * mapped from its own policy, and applies a `set` through its own `system.execApprovals.set`, so a
 * remote change is approved locally like any other (or refused).
 */

type OpenClawSecurity = 'deny' | 'allowlist' | 'full';
type OpenClawAsk = 'off' | 'on-miss' | 'always';

/** What the snapshot calls this policy's location (capnode keeps it in the host settings). */
export const EXEC_APPROVALS_SNAPSHOT_PATH = 'capnode:settings.execApprovals';

interface SnapshotDefaults {
  readonly security: OpenClawSecurity;
  readonly ask: OpenClawAsk;
  readonly askFallback: 'deny';
  readonly autoAllowSkills: false;
}

/** OpenClaw's defaults for a capnode mode (as `system.run.prepare` reports it); `askFallback` is always `deny` (an unanswered prompt refuses). */
function defaultsForMode(mode: ExecApprovalMode): SnapshotDefaults {
  return { ...execPolicyForMode(mode), askFallback: 'deny', autoAllowSkills: false };
}

/** Thrown for a `set` capnode cannot apply as asked; answered as `INVALID_REQUEST`. */
export class SnapshotRequestError extends defineErrorClass('SnapshotRequestError', ['INVALID_REQUEST']) {
  constructor(message: string) {
    super('INVALID_REQUEST', message);
  }
}

async function entryId(entry: ExecAllowlistEntry): Promise<string> {
  return `capnode-${(await argumentsHash(entry)).replace(/[^A-Za-z0-9]/g, '').slice(0, 16)}`;
}

function entryPattern(entry: ExecAllowlistEntry): string {
  return typeof entry === 'string' ? entry : entry.pattern;
}

/** The policy's hash, OpenClaw's `baseHash` guard against lost updates. */
export async function policyHash(policy: ExecApprovalPolicy): Promise<string> {
  return argumentsHash({ mode: policy.mode, allowlist: policy.allowlist });
}

/**
 * The node approvals snapshot for a capnode policy. Allowlist entries keep capnode's pattern syntax
 * (`<program> <arg> … [*]`); each carries an `id` that identifies it exactly (cwd and env scope
 * included), so an entry sent back unchanged keeps its scope.
 */
export async function toExecApprovalsSnapshot(policy: ExecApprovalPolicy): Promise<Record<string, unknown>> {
  const defaults = defaultsForMode(policy.mode);
  const allowlist = await Promise.all(policy.allowlist.map(async (entry) => ({ id: await entryId(entry), pattern: entryPattern(entry) })));
  return {
    path: EXEC_APPROVALS_SNAPSHOT_PATH,
    exists: true,
    hash: await policyHash(policy),
    file: { version: 1, defaults: { ...defaults }, agents: { '*': { allowlist } } },
    resolvedDefaults: { ...defaults },
  };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return isPlainObject(value) ? value : undefined;
}

function modeFor(security: unknown, ask: unknown, current: SnapshotDefaults): ExecApprovalMode {
  const s = security ?? current.security;
  const a = ask ?? current.ask;
  if (s !== 'deny' && s !== 'allowlist' && s !== 'full') throw new SnapshotRequestError(`defaults.security must be deny, allowlist or full, not ${JSON.stringify(s)}`);
  if (a !== 'off' && a !== 'on-miss' && a !== 'always') throw new SnapshotRequestError(`defaults.ask must be off, on-miss or always, not ${JSON.stringify(a)}`);
  if (s === 'deny') return 'deny';
  if (a === 'always') throw new SnapshotRequestError("ask 'always' is not supported by capnode: allowlisted commands run without asking; use 'on-miss'");
  if (s === 'full') return 'full';
  return a === 'on-miss' ? 'ask' : 'allowlist';
}

/** A new entry from OpenClaw's `pattern`: one program token means that program with any arguments. */
function newEntry(raw: Record<string, unknown>): string {
  if (typeof raw.argPattern === 'string' && raw.argPattern.trim()) throw new SnapshotRequestError('argPattern is not supported by capnode; write the arguments into the pattern (e.g. "git status *")');
  const pattern = typeof raw.pattern === 'string' ? raw.pattern.trim() : '';
  if (!pattern) throw new SnapshotRequestError('every allowlist entry needs a pattern');
  if (/\s/.test(pattern)) return pattern;
  if (/[*?[\]]/.test(pattern)) throw new SnapshotRequestError(`path globs such as ${JSON.stringify(pattern)} are not supported by capnode; name the program (e.g. "/usr/bin/git *")`);
  return `${pattern} *`;
}

/**
 * The `system.execApprovals.set` arguments (`{ mode, allowlist }`) for a gateway's `{ file, baseHash }`
 * against the current policy. Refuses (`SnapshotRequestError`) a stale or missing `baseHash`, a
 * host-native policy, per-agent policies (capnode keeps one policy for every agent: use `agents['*']`),
 * ask `always`, askFallback other than `deny`, `autoAllowSkills`, `argPattern` and path globs.
 */
export async function fromExecApprovalsSetParams(params: unknown, current: ExecApprovalPolicy): Promise<{ mode: ExecApprovalMode; allowlist: ExecAllowlistEntry[] }> {
  const p = record(params) ?? {};
  if (p.file === undefined && (p.rules !== undefined || p.defaultAction !== undefined)) throw new SnapshotRequestError('capnode keeps a file-backed exec approvals policy; send file, not native rules');
  const file = record(p.file);
  if (!file) throw new SnapshotRequestError('exec approvals file is required');
  if (p.baseHash !== (await policyHash(current))) throw new SnapshotRequestError('exec approvals changed since last load; re-run exec.approvals.get and retry');
  if (file.version !== 1) throw new SnapshotRequestError('exec approvals file version must be 1');
  const defaults = record(file.defaults) ?? {};
  if (defaults.askFallback !== undefined && defaults.askFallback !== 'deny') throw new SnapshotRequestError("askFallback must be 'deny': capnode refuses a command nobody approved in time");
  if (defaults.autoAllowSkills === true) throw new SnapshotRequestError('autoAllowSkills is not supported by capnode');
  const mode = modeFor(defaults.security, defaults.ask, defaultsForMode(current.mode));
  const agents = record(file.agents) ?? {};
  for (const [agent, value] of Object.entries(agents)) {
    if (agent === '*') continue;
    const fields = record(value) ?? {};
    if (Object.entries(fields).some(([key, field]) => field !== undefined && !(key === 'allowlist' && Array.isArray(field) && field.length === 0))) {
      throw new SnapshotRequestError(`capnode keeps one exec policy for every agent; put agent ${JSON.stringify(agent)}'s entries under agents["*"]`);
    }
  }
  const everyone = record(agents['*']) ?? {};
  for (const key of ['security', 'ask', 'askFallback', 'autoAllowSkills']) {
    if (everyone[key] !== undefined) throw new SnapshotRequestError(`set ${key} in defaults, not in agents["*"]`);
  }
  const rawEntries = everyone.allowlist === undefined ? [] : everyone.allowlist;
  if (!Array.isArray(rawEntries)) throw new SnapshotRequestError('agents["*"].allowlist must be an array');
  const byId = new Map<string, ExecAllowlistEntry>();
  for (const entry of current.allowlist) byId.set(await entryId(entry), entry);
  const allowlist = rawEntries.map((value): ExecAllowlistEntry => {
    const raw = record(value);
    if (!raw) throw new SnapshotRequestError('allowlist entries must be objects with a pattern');
    const kept = typeof raw.id === 'string' ? byId.get(raw.id) : undefined;
    // An entry sent back as it was keeps its cwd and env scope; an edited pattern is a new entry.
    if (kept !== undefined && entryPattern(kept) === raw.pattern && raw.argPattern === undefined) return kept;
    return newEntry(raw);
  });
  return { mode, allowlist };
}

/** Runs one capnode command for the route; the node transport passes the shared pipeline. */
export type RouteInvoke = (command: string, args: unknown) => Promise<InvocationOutcome>;

function outcome(structured: Record<string, unknown>, durationMs: number): InvocationOutcome {
  return { result: { ok: true, content: [{ type: 'text', text: JSON.stringify(structured) }], structured }, command: 'system.execApprovals', durationMs };
}

function readPolicy(result: InvocationOutcome): ExecApprovalPolicy | InvocationOutcome {
  if (!result.result.ok) return result;
  const structured = result.result.structured as { mode?: ExecApprovalMode; allowlist?: ExecAllowlistEntry[] } | undefined;
  return { mode: structured?.mode ?? 'ask', allowlist: structured?.allowlist ?? [] };
}

/**
 * Serves the gateway's `system.execApprovals.get|set` in the snapshot shape: reads (and for `set`
 * changes) the policy through `invoke` (the shared pipeline, so `set` asks the user as any remote
 * change does) and answers the snapshot, or a failure (`invalid_arguments` for a request that
 * cannot be applied).
 */
export async function serveExecApprovalsRoute(command: 'system.execApprovals.get' | 'system.execApprovals.set', params: unknown, invoke: RouteInvoke): Promise<InvocationOutcome> {
  const started = Date.now();
  const current = readPolicy(await invoke('system.execApprovals.get', {}));
  if ('result' in current) return current;
  if (command === 'system.execApprovals.get') return outcome(await toExecApprovalsSnapshot(current), Date.now() - started);
  let args: { mode: ExecApprovalMode; allowlist: ExecAllowlistEntry[] };
  try {
    args = await fromExecApprovalsSetParams(params, current);
  } catch (error) {
    if (!SnapshotRequestError.is(error)) throw error;
    return { result: { ok: false, error: { code: 'invalid_arguments', message: error.message, data: { code: 'INVALID_REQUEST' } } }, command, durationMs: Date.now() - started };
  }
  const next = readPolicy(await invoke('system.execApprovals.set', args));
  if ('result' in next) return next;
  return outcome(await toExecApprovalsSnapshot(next), Date.now() - started);
}
