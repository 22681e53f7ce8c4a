import { formatApprovalSummary, isApprovalDecision, type AnsweredApproval, type ApprovalBroker, type PendingApproval } from '@capnode/capabilities';
import { apiError, json, readJsonBody } from '../reply.js';
import type { AllowedView, ApprovalsView, PendingView } from '../pendingView.js';
import type { Route } from '../types.js';

export function toPendingView(approval: PendingApproval): PendingView {
  return {
    id: approval.id,
    command: approval.command,
    summary: formatApprovalSummary(approval).join('\n'),
    argsHash: approval.argsHash ?? '',
    ...(approval.transport === undefined ? {} : { transport: approval.transport }),
    ...(approval.client === undefined ? {} : { client: approval.client }),
    ...(approval.caller === undefined ? {} : { caller: approval.caller }),
    requestedAt: new Date(approval.createdAt).toISOString(),
    expiresAt: new Date(approval.expiresAt).toISOString(),
  };
}

function toAllowedView(approval: AnsweredApproval): AllowedView {
  return {
    id: approval.id,
    command: approval.command,
    summary: formatApprovalSummary(approval).join('\n'),
    ...(approval.transport === undefined ? {} : { transport: approval.transport }),
    ...(approval.client === undefined ? {} : { client: approval.client }),
    ...(approval.caller === undefined ? {} : { caller: approval.caller }),
    decision: approval.decision,
    retryUntil: new Date(approval.retryUntil).toISOString(),
  };
}

/** What waits for an answer, and what was allowed and waits for the agent's retry. */
export function pendingViews(approvals: Pick<ApprovalBroker, 'list' | 'answered'>): ApprovalsView {
  return { pending: approvals.list().map(toPendingView), allowed: approvals.answered().map(toAllowedView) };
}

/**
 * `GET /api/approvals` and `POST /api/approvals/:id` `{ decision, hash }`: the answer applies only
 * to the request whose full argument hash was shown (409 otherwise; 404 when it is no longer pending).
 */
export const approvalRoutes: readonly Route[] = [
  ['GET', '/api/approvals', ({ host }) => json(200, pendingViews(host.approvals))],
  [
    'POST',
    '/api/approvals/:id',
    async ({ request, params, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      const { decision, hash } = body;
      if (!isApprovalDecision(decision)) return apiError(400, 'invalid', "decision must be 'allow-once', 'allow-always' or 'deny'", [{ path: 'decision', message: 'unknown decision' }]);
      if (typeof hash !== 'string') return apiError(400, 'invalid', 'hash must be the argsHash shown with the approval', [{ path: 'hash', message: 'required' }]);
      const id = params.id ?? '';
      const pending = host.approvals.list().find((approval) => approval.id === id.trim().toLowerCase());
      if (!pending) return apiError(404, 'not_found', `no pending approval '${id}' (already answered, expired, or never existed)`);
      const shown = pending.argsHash === undefined && hash === '' ? {} : { argsHash: hash };
      const resolution = host.approvals.answer(pending.id, decision, shown);
      if (resolution === 'unknown') return apiError(404, 'not_found', `no pending approval '${id}' (already answered, expired, or never existed)`);
      if (resolution === 'hash_mismatch') return apiError(409, 'conflict', `approval '${id}' is not the request that was shown (its argument hash differs); nothing was answered`);
      host.log('info', `approval ${pending.id} answered ${decision} from the dashboard`);
      return json(200, { ok: true, id: pending.id, decision });
    },
  ],
];
