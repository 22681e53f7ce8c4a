import { argsHashPrefix, formatApprovalSummary, type AnsweredApproval, type PendingApproval } from '@capnode/capabilities';
import { escapeForDisplay } from '@capnode/capabilities/display';
import { adminEndpoints, type Context } from '../context.js';
import { CliError, isCliError } from '../errors.js';
import { notRunningMessage, readText, send, unexpectedStatus, type Endpoint } from '../http.js';

export interface AdminAnswer {
  readonly status: number;
  readonly value: Record<string, unknown>;
}

/** GET (no body) or POST one admin route; 200, 404 and 409 come back as answers, the rest as errors. */
export async function admin(endpoint: Endpoint, path: string, body?: unknown): Promise<AdminAnswer> {
  const result = await send(endpoint, new URL(path, endpoint.url).href, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (result.status !== 200 && result.status !== 404 && result.status !== 409) throw await unexpectedStatus(endpoint, result);
  const text = await readText(result.response);
  try {
    return { status: result.status, value: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new CliError('failure', `the host answered ${path} with something that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** The "start one" error for a host that is not running. */
export function unreachable(endpoints: readonly Endpoint[]): CliError {
  return new CliError('unreachable', `${notRunningMessage(new URL('/', endpoints[0]!.url).href)} (approvals are answered by a running host)`);
}

/**
 * Runs `call` against every host; hosts that went away meanwhile are skipped. Throws the first
 * error when no host answered, with the "start one" hint for an unreachable host.
 */
async function eachHost<T>(endpoints: readonly Endpoint[], call: (endpoint: Endpoint) => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  let firstError: unknown;
  for (const endpoint of endpoints) {
    try {
      answers.push(await call(endpoint));
    } catch (error) {
      firstError ??= error;
    }
  }
  if (answers.length === 0) {
    if (isCliError(firstError) && firstError.code === 'unreachable') throw unreachable(endpoints);
    throw firstError;
  }
  return answers;
}

/** A listed approval, checked enough to render (the host may be another version). */
export function isPendingApproval(value: unknown): value is PendingApproval {
  const record = value as Partial<PendingApproval> | null;
  return typeof record === 'object' && record !== null && typeof record.id === 'string' && typeof record.command === 'string' && typeof record.commandLine === 'string';
}

/** An answer the host keeps for the agent's retry, checked enough to render. */
export function isAllowedApproval(value: unknown): value is AnsweredApproval {
  return isPendingApproval(value) && typeof (value as Partial<AnsweredApproval>).retryUntil === 'number';
}

/** The line the dashboard's Approvals page shows for an answer kept for a retry: "allowed — runs when the agent retries (n s left)". */
export function formatAllowed(approval: AnsweredApproval, now = Date.now()): string {
  const left = Math.max(0, Math.round((approval.retryUntil - now) / 1000));
  return `${escapeForDisplay(approval.id)}  ${escapeForDisplay(approval.commandLine)}  allowed — runs when the agent retries (${left} s left)`;
}

/**
 * One approval as the CLI shows it: id and time left, then the full escaped summary (program and
 * resolved path, argv, cwd, env keys with masked values, shell, timeout, transport, self-reported
 * caller, hash prefix).
 */
export function formatApproval(approval: PendingApproval, now = Date.now()): string {
  const left = Math.max(0, Math.round((approval.expiresAt - now) / 1000));
  return [`${escapeForDisplay(approval.id)}  (denied automatically in ${left} s)`, ...formatApprovalSummary(approval).map((line) => `  ${line}`)].join('\n');
}

function formatApprovals(approvals: readonly PendingApproval[], allowed: readonly AnsweredApproval[] = []): string {
  const now = Date.now();
  const kept = allowed.length === 0 ? [] : [allowed.map((approval) => formatAllowed(approval, now)).join('\n')];
  if (approvals.length === 0) return ['no pending approvals', ...kept].join('\n\n');
  return [
    ...approvals.map((approval) => formatApproval(approval, now)),
    ...kept,
    '',
    'answer with: capnode approvals allow <id> [--always] | capnode approvals deny <id> | capnode approvals watch',
  ].join('\n\n');
}

/** Every host's pending approvals, and the answers each keeps for a retry (`allowed`). */
async function listEverything(endpoints: readonly Endpoint[]): Promise<{ pending: { endpoint: Endpoint; approval: PendingApproval }[]; allowed: AnsweredApproval[] }> {
  const answers = await eachHost(endpoints, async (endpoint) => ({ endpoint, answer: await admin(endpoint, 'approvals') }));
  const pending = answers.flatMap(({ endpoint, answer }) => {
    const listed = Array.isArray(answer.value.approvals) ? (answer.value.approvals as unknown[]) : [];
    return listed.filter(isPendingApproval).map((approval) => ({ endpoint, approval }));
  });
  const allowed = answers.flatMap(({ answer }) => (Array.isArray(answer.value.allowed) ? (answer.value.allowed as unknown[]).filter(isAllowedApproval) : []));
  return { pending, allowed };
}

async function listAll(endpoints: readonly Endpoint[]): Promise<{ endpoint: Endpoint; approval: PendingApproval }[]> {
  return (await listEverything(endpoints)).pending;
}

/** Sends `decision` for `approval` to the host that holds it, bound to the hash the person saw. */
export async function answerApproval(endpoint: Endpoint, approval: PendingApproval, decision: 'allow-once' | 'allow-always' | 'deny'): Promise<AdminAnswer> {
  return admin(endpoint, 'approvals', { id: approval.id, decision, ...(approval.argsHash === undefined ? {} : { argsHash: approval.argsHash }) });
}

export function describeDecision(decision: string): string {
  return decision === 'deny' ? 'denied' : decision === 'allow-always' ? 'allowed, and from now on without asking (saved in settings.json)' : 'allowed once';
}

/**
 * `capnode approvals list|allow <id> [--always] [--hash <prefix>]|deny <id> [--hash <prefix>]|watch`,
 * answered through the admin route of every running host of this config directory (`capnode serve`
 * and `capnode mcp` instances). An answer is bound to the request's argument hash: `--hash` (the
 * prefix `list` showed) refuses to answer a request that is not the one seen.
 */
export async function approvals(context: Context): Promise<number> {
  const action = context.args.positionals[1];
  const endpoints = adminEndpoints(context);
  if (action === 'list' || action === undefined) {
    const listed = await listEverything(endpoints);
    const pending = listed.pending.map((entry) => entry.approval);
    context.out(context.json ? JSON.stringify({ approvals: pending, allowed: listed.allowed }, null, 2) : formatApprovals(pending, listed.allowed));
    return 0;
  }
  if (action === 'watch') return (await import('./approvalsWatch.js')).watchApprovals(context, endpoints);
  if (action !== 'allow' && action !== 'deny') throw new CliError('usage', `usage: capnode approvals list|watch|allow <id> [--always]|deny <id> (unknown action '${action}')`);
  const id = context.args.positionals[2]?.trim().toLowerCase();
  if (!id) throw new CliError('usage', `usage: capnode approvals ${action} <id> — find ids with: capnode approvals list`);
  const always = context.args.flags.has('always');
  if (always && action === 'deny') throw new CliError('usage', '--always applies to allow only');
  const decision = action === 'deny' ? 'deny' : always ? 'allow-always' : 'allow-once';
  const shownHash = context.args.flags.get('hash');
  const found = (await listAll(endpoints)).find((entry) => entry.approval.id === id);
  if (!found) throw new CliError('failure', `no pending approval '${escapeForDisplay(id)}' (already answered, expired, or never existed) — see pending ones with: capnode approvals list`);
  if (typeof shownHash === 'string' && (found.approval.argsHash === undefined || !argsHashPrefix(found.approval.argsHash).startsWith(shownHash.trim().toLowerCase()) || !shownHash.trim())) {
    throw new CliError('failure', `approval '${id}' is not the request you saw: its hash is ${found.approval.argsHash ? argsHashPrefix(found.approval.argsHash) : '(none)'}, not ${escapeForDisplay(shownHash)}; nothing was answered`);
  }
  const answered = await answerApproval(found.endpoint, found.approval, decision);
  if (answered.status !== 200) throw new CliError('failure', `${escapeForDisplay(String(answered.value.error ?? `no pending approval '${id}'`))} — see pending ones with: capnode approvals list`);
  if (context.json) context.out(JSON.stringify(answered.value, null, 2));
  else context.out(`${describeDecision(decision)}: ${escapeForDisplay(id)}`);
  return 0;
}
