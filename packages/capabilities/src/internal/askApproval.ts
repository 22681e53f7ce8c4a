import type { ApprovalBroker, ApprovalDecision, ApprovalRequestInput } from '../approvalBroker.js';
import { CapabilityError } from '../errors.js';

/** Longest command line quoted back in an error message. */
const MAX_QUOTED = 200;

/** `120 s`, `1.5 s`, `50 ms`. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** Shortens a command line for messages. */
export function quoteForMessage(value: string): string {
  return value.length > MAX_QUOTED ? `${value.slice(0, MAX_QUOTED)}…` : value;
}

/**
 * Asks the broker and returns an allowing decision, or throws the matching `CapabilityError`:
 * `approval_timeout` when nobody answered in time, `denied` otherwise. `what` names the action in
 * messages, e.g. "system.run `git push`".
 */
export async function askApproval(
  broker: ApprovalBroker,
  input: ApprovalRequestInput,
  what: string,
  signal: AbortSignal,
): Promise<Exclude<ApprovalDecision, 'deny'>> {
  const answer = await broker.request(input, { signal });
  if (answer.decision !== 'deny') return answer.decision;
  const data = { approvalId: answer.id, settlement: answer.settlement };
  switch (answer.settlement) {
    case 'timeout':
      throw new CapabilityError(
        'approval_timeout',
        `${what} did not run: nobody answered its approval request (${answer.id}) within ${formatDuration(broker.timeoutMs)}, which counts as a denial. Pending requests are answered with \`capnode approvals allow <id>\` or in the tray.`,
        { data },
      );
    case 'closed':
      throw new CapabilityError('denied', `${what} did not run: the host is shutting down and denied its pending approval.`, { data });
    case 'overflow':
      throw new CapabilityError('denied', `${what} did not run: too many approval requests are waiting; answer or let them expire, then retry.`, { data });
    default:
      throw new CapabilityError('denied', `${what} was denied by the user (approval ${answer.id}).`, { data });
  }
}
