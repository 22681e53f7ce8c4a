import type { ApprovalAnswer, ApprovalBroker, ApprovalDecision, ApprovalRequestInput, ApprovalWaitMode, PendingApproval } from '../approvalBroker.js';
import { formatApprovalSummary } from '../approvalSummary.js';
import type { ElicitationRequest, ElicitationResult, Elicitor, ProgressUpdate } from '../contract.js';
import { waitFor } from '@capnode/toolkit';
import { CapabilityError } from '../errors.js';
import { hashInvocationArgs } from './argsHash.js';
import { reachesCaller } from './noProgress.js';

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
 * What an approval wait can use of its call: the signal, and when the caller offers them, progress
 * and a way to ask the user through the client. An `Invocation` fits; so does a bare signal.
 */
export interface ApprovalContext {
  readonly signal: AbortSignal;
  readonly progress?: ((update: ProgressUpdate) => void) | undefined;
  readonly elicit?: Elicitor | undefined;
  /** The client answers questions on a retry of the call (see `InvokeOptions.elicitOnRetry`). */
  readonly elicitOnRetry?: boolean | undefined;
  /** The call's command and parsed arguments: the argument hash when the request carries none. */
  readonly command?: { readonly name: string };
  readonly args?: unknown;
}

/** Transports whose callers always wait: the CLI prints what it waits for, a gateway and OpenAgent have their own deadlines. */
const WAITING_TRANSPORTS: ReadonlySet<string> = new Set(['cli', 'gateway', 'openagent', 'internal']);

/** The answer of the user's client: `allow-once`, `deny`, or undefined when it said nothing usable. */
function decisionOf(result: ElicitationResult): Exclude<ApprovalDecision, 'allow-always'> | undefined {
  if (result.action === 'decline' || result.action === 'cancel') return 'deny';
  const choice = result.content?.decision;
  if (choice === 'allow-once' || choice === 'deny') return choice;
  return undefined;
}

/** The question put through the client: the same summary the host shows, and a choice of allow once or deny. */
export function approvalElicitation(approval: PendingApproval): ElicitationRequest {
  return {
    key: `approval:${approval.id}`,
    message: [
      'capnode asks for your approval:',
      ...formatApprovalSummary(approval),
      `approval id: ${approval.id} (also answerable with: capnode approvals allow|deny ${approval.id})`,
    ].join('\n'),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Your answer',
          oneOf: [
            { const: 'allow-once', title: 'Allow once' },
            { const: 'deny', title: 'Deny' },
          ],
        },
      },
      required: ['decision'],
    },
  };
}

/** `hold`: `auto` for a caller that cannot be kept informed: held for `holdMs`, then returned like `return`. */
function waitModeFor(broker: ApprovalBroker, input: ApprovalRequestInput, context: ApprovalContext): Exclude<ApprovalWaitMode, 'auto'> | 'hold' {
  // Without a hash no retry can find the request again, so the call has to wait.
  if (input.argsHash === undefined) return 'block';
  // A client that answers on a retry cannot be kept waiting: the question goes out with the return.
  if (context.elicit && context.elicitOnRetry && broker.elicitationEnabled()) return 'return';
  const mode = broker.waitMode();
  if (mode !== 'auto') return mode;
  if (reachesCaller(context.progress) || (context.elicit && broker.elicitationEnabled())) return 'block';
  return input.transport !== undefined && WAITING_TRANSPORTS.has(input.transport) ? 'block' : 'hold';
}

/**
 * Holds an opened request for up to `broker.holdMs()`: the answer given meanwhile (claimed, so it is
 * not kept for a retry as well), or undefined when the hold ends first. Aborting `signal` rejects;
 * the request stays open for a retry.
 */
async function holdForAnswer(broker: ApprovalBroker, request: ApprovalRequestInput, approval: PendingApproval, signal: AbortSignal): Promise<ApprovalAnswer | undefined> {
  const holdMs = broker.holdMs();
  if (holdMs <= 0) return undefined;
  let unsubscribe = () => {};
  const resolved = new Promise<ApprovalAnswer>((resolve) => {
    unsubscribe = broker.subscribe((event) => {
      if (event.type === 'resolved' && event.approval.id === approval.id) resolve({ id: approval.id, decision: event.decision, settlement: event.settlement });
    });
  });
  let answer: ApprovalAnswer | undefined;
  try {
    answer = await waitFor(resolved, { timeoutMs: holdMs, signal, timeoutReason: () => HOLD_ENDED });
  } catch (error) {
    if (error !== HOLD_ENDED) throw error;
    return undefined;
  } finally {
    unsubscribe();
  }
  const claimed = broker.claim(request);
  return claimed && 'answer' in claimed ? claimed.answer : answer;
}

/** The reason a hold's deadline ends with (told apart from the caller's own abort). */
const HOLD_ENDED = Symbol('approval hold ended');

/**
 * Waits for the broker's answer while keeping the caller informed: a progress report at once and
 * every `broker.progressIntervalMs` (clients that reset their timeout on progress keep waiting), and
 * the question put through the client when it can elicit. Whichever of the host and the client
 * answers first wins; the other is withdrawn.
 */
async function waitForAnswer(broker: ApprovalBroker, input: ApprovalRequestInput, context: ApprovalContext, what: string): Promise<ApprovalAnswer> {
  const withdraw = new AbortController();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const onPending = (approval: PendingApproval) => {
    const { progress } = context;
    const elicit = broker.elicitationEnabled() ? context.elicit : undefined;
    if (progress) {
      let tick = 0;
      const report = () => {
        tick += 1;
        const left = Math.max(0, Math.round((approval.expiresAt - Date.now()) / 1000));
        progress({
          progress: tick,
          message: `waiting for approval ${approval.id} of ${what}: answer with capnode approvals allow ${approval.id} (or deny ${approval.id}); denied automatically in ${left} s`,
        });
      };
      report();
      heartbeat = setInterval(report, broker.progressIntervalMs);
      (heartbeat as { unref?: () => void }).unref?.();
    }
    if (elicit) {
      const argsHash = approval.argsHash === undefined ? {} : { argsHash: approval.argsHash };
      elicit(approvalElicitation(approval), { signal: withdraw.signal }).then(
        (result) => {
          const decision = decisionOf(result);
          if (decision !== undefined && !withdraw.signal.aborted) broker.answer(approval.id, decision, argsHash);
        },
        () => {
          // The client could not ask (or the question was withdrawn): the host's answer still counts.
        },
      );
    }
  };
  try {
    return await broker.request(input, { signal: context.signal, onPending });
  } finally {
    clearInterval(heartbeat);
    withdraw.abort(new Error('the approval was answered elsewhere'));
  }
}

/**
 * For a client that answers on a retry of the call: puts the question for `approval` to it. A retry
 * that carries the answer resolves at once (the answer is given to the broker, bound to the hash, and
 * claimed); otherwise the client records the question for the return and this yields undefined.
 */
async function answerFromRetry(broker: ApprovalBroker, request: ApprovalRequestInput, approval: PendingApproval, context: ApprovalContext): Promise<ApprovalAnswer | undefined> {
  if (!context.elicit || !context.elicitOnRetry || !broker.elicitationEnabled()) return undefined;
  let decision: ReturnType<typeof decisionOf>;
  try {
    decision = decisionOf(await context.elicit(approvalElicitation(approval), { signal: context.signal }));
  } catch {
    return undefined;
  }
  if (decision === undefined) return undefined;
  broker.answer(approval.id, decision, approval.argsHash === undefined ? {} : { argsHash: approval.argsHash });
  const claimed = broker.claim(request);
  return claimed && 'answer' in claimed ? claimed.answer : undefined;
}

function pendingFailure(approval: PendingApproval, what: string, broker: ApprovalBroker): CapabilityError {
  const left = Math.max(1, Math.round((approval.expiresAt - Date.now()) / 1000));
  return new CapabilityError(
    'approval_pending',
    `${what} is waiting for the user's approval (${approval.id}); it has not run. The user answers on the Approvals page of the capnode dashboard (\`capnode ui\` opens it; the tray shows it too) or with \`capnode approvals allow ${approval.id}\` (or \`capnode approvals deny ${approval.id}\`). Retry this identical call within ${left} s: it runs once allowed (a retry before the answer returns this again).`,
    {
      data: {
        approvalId: approval.id,
        expiresAt: approval.expiresAt,
        timeoutMs: broker.timeoutMs,
        ...(approval.argsHash === undefined ? {} : { argsHash: approval.argsHash }),
        answerWith: `capnode approvals allow ${approval.id}`,
        answerOn: 'dashboard: Approvals (capnode ui)',
      },
    },
  );
}

/** An allowing decision, or the `CapabilityError` that tells the caller why it did not run. */
function decide(answer: ApprovalAnswer, what: string, broker: ApprovalBroker): Exclude<ApprovalDecision, 'deny'> {
  if (answer.decision !== 'deny') return answer.decision;
  const data = { approvalId: answer.id, settlement: answer.settlement };
  switch (answer.settlement) {
    case 'timeout':
      throw new CapabilityError(
        'approval_timeout',
        `${what} did not run: nobody answered its approval request (${answer.id}) within ${formatDuration(broker.timeoutMs)}, which counts as a denial. Pending requests are answered with \`capnode approvals allow <id>\` or in the tray.`,
        { data: { ...data, timeoutMs: broker.timeoutMs } },
      );
    case 'closed':
      throw new CapabilityError('cancelled', `${what} did not run: the host is shutting down and withdrew its pending approval.`, { data });
    case 'overflow':
      throw new CapabilityError('busy', `${what} did not run: too many of this client's approval requests are waiting; answer or let them expire, then retry.`, { data });
    case 'cancelled':
      throw new CapabilityError('cancelled', `${what} did not run: its approval request was withdrawn.`, { data });
    default:
      throw new CapabilityError('denied', `${what} was denied by the user (approval ${answer.id}).`, { data });
  }
}

/**
 * Asks for approval and returns an allowing decision, or throws the matching `CapabilityError`:
 * `denied` (the user said no), `approval_timeout` (nobody answered in time), `cancelled` (withdrawn,
 * host shutting down), `busy` (this caller's share of the queue is full), `approval_pending` (wait
 * mode `return`: answer, then retry the identical call). `what` names the action in messages, e.g.
 * "system.run `git push`". Given the call's command and arguments, a request without `argsHash`
 * gets one, so an identical retry finds it again.
 */
export async function askApproval(
  broker: ApprovalBroker,
  input: ApprovalRequestInput,
  what: string,
  call: AbortSignal | ApprovalContext,
): Promise<Exclude<ApprovalDecision, 'deny'>> {
  const context: ApprovalContext = call instanceof AbortSignal ? { signal: call } : call;
  let request = input;
  if (request.argsHash === undefined && context.command !== undefined) {
    request = { ...request, argsHash: await hashInvocationArgs(context.command.name, context.args) };
  }
  const claimed = broker.claim(request);
  if (claimed && 'answer' in claimed) return decide(claimed.answer, what, broker);
  const mode = waitModeFor(broker, request, context);
  if (mode !== 'block') {
    const opened = claimed?.pending ?? broker.open(request);
    if ('settlement' in opened) return decide(opened, what, broker);
    const answered = mode === 'hold' ? await holdForAnswer(broker, request, opened, context.signal) : await answerFromRetry(broker, request, opened, context);
    if (answered) return decide(answered, what, broker);
    throw pendingFailure(opened, what, broker);
  }
  return decide(await waitForAnswer(broker, request, context, what), what, broker);
}
