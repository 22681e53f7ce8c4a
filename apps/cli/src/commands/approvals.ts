import { adminEndpoints, type Context } from '../context.js';
import { CliError, isCliError } from '../errors.js';
import { notRunningMessage, readText, send, unexpectedStatus, type Endpoint } from '../http.js';

/** A pending approval as the host's admin route lists it (fields the CLI shows). */
interface PendingApproval {
  readonly id: string;
  /** Tool name, e.g. `system.run`. */
  readonly command?: string;
  readonly commandLine?: string;
  readonly summary?: string;
  readonly cwd?: string;
  readonly caller?: string;
  /** Epoch ms. */
  readonly expiresAt?: number;
}

interface AdminAnswer {
  readonly status: number;
  readonly value: Record<string, unknown>;
}

async function admin(endpoint: Endpoint, path: string, body?: unknown): Promise<AdminAnswer> {
  const result = await send(endpoint, new URL(path, endpoint.url).href, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (result.status !== 200 && result.status !== 404) throw await unexpectedStatus(endpoint, result);
  const text = await readText(result.response);
  try {
    return { status: result.status, value: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new CliError('failure', `the host answered ${path} with something that is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * Runs `call` against every host; hosts that went away meanwhile are skipped. Throws the first
 * error when no host answered, with the "start one" hint for an unreachable host.
 */
async function eachHost(endpoints: readonly Endpoint[], call: (endpoint: Endpoint) => Promise<AdminAnswer>): Promise<AdminAnswer[]> {
  const answers: AdminAnswer[] = [];
  let firstError: unknown;
  for (const endpoint of endpoints) {
    try {
      answers.push(await call(endpoint));
    } catch (error) {
      firstError ??= error;
    }
  }
  if (answers.length === 0) {
    if (isCliError(firstError) && firstError.code === 'unreachable') {
      throw new CliError('unreachable', `${notRunningMessage(new URL('/', endpoints[0]!.url).href)} (approvals are answered by a running host)`);
    }
    throw firstError;
  }
  return answers;
}

function seconds(epochMs: number | undefined, now: number): string {
  return typeof epochMs === 'number' ? `${Math.max(0, Math.round((epochMs - now) / 1000))}s` : '';
}

function formatApprovals(approvals: readonly PendingApproval[]): string {
  if (approvals.length === 0) return 'no pending approvals';
  const now = Date.now();
  const rows = approvals.map((approval) => [
    approval.id,
    approval.command ?? '',
    approval.summary ?? approval.commandLine ?? '',
    approval.cwd ?? '',
    approval.caller ?? '',
    seconds(approval.expiresAt, now),
  ]);
  const header = ['ID', 'TOOL', 'RUNS', 'CWD', 'CALLER', 'DENIED IN'];
  const widths = header.map((title, column) => Math.min(60, Math.max(title.length, ...rows.map((row) => row[column]!.length))));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line), '', 'answer with: capnode approvals allow <id> [--always] | capnode approvals deny <id>'].join('\n');
}

/**
 * `capnode approvals list|allow <id> [--always]|deny <id>`, answered through the admin route of
 * every running host of this config directory (`capnode serve` and `capnode mcp` instances).
 */
export async function approvals(context: Context): Promise<number> {
  const action = context.args.positionals[1];
  const endpoints = adminEndpoints(context);
  if (action === 'list' || action === undefined) {
    const answers = await eachHost(endpoints, (endpoint) => admin(endpoint, 'approvals'));
    const pending = answers.flatMap((answer) => (answer.value.approvals ?? []) as PendingApproval[]);
    context.out(context.json ? JSON.stringify({ approvals: pending }, null, 2) : formatApprovals(pending));
    return 0;
  }
  if (action !== 'allow' && action !== 'deny') throw new CliError('usage', `usage: capnode approvals list|allow <id> [--always]|deny <id> (unknown action '${action}')`);
  const id = context.args.positionals[2];
  if (!id) throw new CliError('usage', `usage: capnode approvals ${action} <id> — find ids with: capnode approvals list`);
  const always = context.args.flags.has('always');
  if (always && action === 'deny') throw new CliError('usage', '--always applies to allow only');
  const decision = action === 'deny' ? 'deny' : always ? 'allow-always' : 'allow-once';
  const answers = await eachHost(endpoints, (endpoint) => admin(endpoint, 'approvals', { id, decision }));
  const answered = answers.find((answer) => answer.status === 200);
  if (!answered) {
    throw new CliError('failure', `${String(answers[0]?.value.error ?? `no pending approval '${id}'`)} — see pending ones with: capnode approvals list`);
  }
  if (context.json) context.out(JSON.stringify(answered.value, null, 2));
  else context.out(`${decision === 'deny' ? 'denied' : decision === 'allow-always' ? 'allowed, and from now on without asking (saved in settings.json)' : 'allowed once'}: ${id}`);
  return 0;
}
