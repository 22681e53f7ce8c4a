// Approvals, live: each pending request with its full summary (as text, never markup), a countdown
// and the three answers. Answered requests leave the list at once; the stream confirms.
import { useId } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, formatTime, PageHeader, useAction } from '../components.js';
import { dropPending, refreshLive, useLive, useNow } from '../live.js';
import type { AllowedView, PendingView } from '../types.js';

type Decision = 'allow-once' | 'allow-always' | 'deny';

function remaining(expiresAt: string | number, now: number): string {
  const seconds = Math.max(0, Math.round((new Date(expiresAt).getTime() - now) / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes ? `${minutes} min ${seconds % 60} s` : `${seconds} s`;
}

function Approval(props: { approval: PendingView; now: number }) {
  const { approval } = props;
  const titleId = useId();
  const action = useAction();
  const answer = (decision: Decision) =>
    action.run(async () => {
      await api('POST', `/api/approvals/${encodeURIComponent(approval.id)}`, { decision, hash: approval.argsHash });
      dropPending(approval.id);
      void refreshLive();
    });
  return (
    <article class="card approval" aria-labelledby={titleId}>
      <h2 id={titleId}>
        <code>{approval.command}</code> <span class="muted">request {approval.id}</span>
      </h2>
      {/* The summary is escaped text from the host: rendered as a text node, never as HTML. */}
      <pre class="summary">{approval.summary}</pre>
      <p class="meta">
        {fromText(approval) ?? 'From an unnamed caller'}
        {approval.transport ? ` over ${approval.transport}` : ''}
        {approval.requestedAt ? `, asked ${formatTime(approval.requestedAt)}` : ''}.{' '}
        <span class="countdown">Denied automatically in {remaining(approval.expiresAt, props.now)}</span>
      </p>
      <div class="actions">
        <button type="button" class="primary" disabled={action.busy} onClick={() => answer('allow-once')}>
          Allow once
        </button>
        <button type="button" disabled={action.busy} onClick={() => answer('allow-always')}>
          Allow always
        </button>
        <button type="button" class="danger" disabled={action.busy} onClick={() => answer('deny')}>
          Deny
        </button>
      </div>
      <ErrorNote error={action.error} />
    </article>
  );
}

/** An allowed request that has not run yet: the call runs when the agent retries it, until the countdown ends. */
function Allowed(props: { approval: AllowedView; now: number }) {
  const { approval } = props;
  return (
    <article class="card approval allowed">
      <h2>
        <code>{approval.command}</code> <span class="muted">request {approval.id}</span>
      </h2>
      <pre class="summary">{approval.summary}</pre>
      <p class="meta">
        <span class="countdown">
          Allowed — runs when the agent retries ({remaining(approval.retryUntil, props.now)} left)
        </span>
        {fromText(approval) ? `. ${fromText(approval)}` : ''}
        {approval.transport ? ` over ${approval.transport}` : ''}.
      </p>
    </article>
  );
}

export function ApprovalsPage() {
  const { pending, allowed: kept } = useLive();
  const now = useNow();
  const allowed = kept.filter((approval) => new Date(approval.retryUntil).getTime() > now);
  return (
    <>
      <PageHeader title="Approvals">Requests that wait for your answer. "Allow always" also allows the same request from now on (the command joins the exec allowlist; an imported tool is auto-approved).</PageHeader>
      <p class="visually-hidden" role="status" aria-live="polite">
        {pending.length === 0 ? 'No pending approvals.' : `${pending.length} pending approval${pending.length === 1 ? '' : 's'}.`}
      </p>
      <div class="approvals">
        {pending.length === 0 ? <p class="empty">Nothing waits for an answer.</p> : pending.map((approval) => <Approval key={approval.id} approval={approval} now={now} />)}
        {allowed.map((approval) => (
          <Allowed key={approval.id} approval={approval} now={now} />
        ))}
      </div>
    </>
  );
}

/** "From <token name>" (the client as verified), with the self-reported name as detail; the self-reported name alone without a token. */
function fromText(approval: { readonly client?: string; readonly caller?: string }): string | undefined {
  if (approval.client !== undefined) return `From ${approval.client}${approval.caller && approval.caller !== approval.client ? ` (says ${approval.caller})` : ''}`;
  return approval.caller ? `From ${approval.caller}` : undefined;
}
