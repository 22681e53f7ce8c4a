import type { ApprovalBroker, CommandFailure, CommandResult, PendingApproval } from '@capnode/capabilities';
import { eventually, type PollOptions } from './poll.js';

/** The error of a command result that failed; throws, naming what it returned instead, when it succeeded. */
export function failureOf(result: CommandResult): CommandFailure['error'] {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.structured ?? result.content)}`);
  return result.error;
}

/** The first approval `broker` holds, once one is pending. */
export function nextPending(broker: Pick<ApprovalBroker, 'list'>, options: PollOptions = {}): Promise<PendingApproval> {
  return eventually(() => broker.list()[0], { what: 'a pending approval', ...options });
}
