import { formatApprovalSummary, type ApprovalBroker, type PendingApproval } from '@capnode/capabilities';
import { escapeForDisplay } from '@capnode/capabilities/display';
import { showDesktopNotification } from '@capnode/capabilities/node';

/**
 * The host log's announcement of a pending approval: the whole escaped summary (see
 * `formatApprovalSummary`), one field per indented line, and how to answer it. `homeHint` prefixes
 * the CLI commands (e.g. `CAPNODE_HOME=/x `) when the host runs with a non-default home.
 */
export function describePending(approval: PendingApproval, homeHint: string): string {
  const seconds = Math.max(1, Math.round((approval.expiresAt - approval.createdAt) / 1000));
  const hint = escapeForDisplay(homeHint);
  return [
    `approval needed (${approval.id}):`,
    ...formatApprovalSummary(approval).map((line) => `  ${line}`),
    `  allow: ${hint}capnode approvals allow ${approval.id} [--always] · deny: ${hint}capnode approvals deny ${approval.id} · or: ${hint}capnode approvals watch · denied automatically in ${seconds} s`,
  ].join('\n');
}

/** Title and body of the desktop notification for a pending approval (escaped, like every rendering). */
function approvalNotification(approval: PendingApproval): { readonly title: string; readonly body: string } {
  return {
    title: `capnode: approval needed (${escapeForDisplay(approval.command)})`,
    body: [...formatApprovalSummary(approval), `answer: capnode approvals allow ${approval.id} | deny ${approval.id}`].join('\n'),
  };
}

export interface ApprovalNotifierOptions {
  readonly broker: ApprovalBroker;
  /** Read for each new request (`approvals.notify`). */
  readonly enabled: () => boolean;
  /** Environment the notifier is found in (PATH). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (level: 'debug' | 'warning', message: string) => void;
}

/**
 * Shows a desktop notification (system.notify's backends) for each new pending approval. A machine
 * without a notifier is reported once, at debug level; a failing notifier once as a warning. Returns
 * the function that stops it and waits for notifications in flight.
 */
export function startApprovalNotifier(options: ApprovalNotifierOptions): () => Promise<void> {
  const controller = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  let reported = false;
  const unsubscribe = options.broker.subscribe((event) => {
    if (event.type !== 'requested' || !options.enabled()) return;
    const { title, body } = approvalNotification(event.approval);
    const shown = showDesktopNotification({ title, body, urgency: 'critical', env: options.env as NodeJS.ProcessEnv, signal: controller.signal }).catch((error: unknown) => {
      if (reported || controller.signal.aborted) return;
      reported = true;
      const code = (error as { code?: unknown }).code;
      options.log(code === 'unsupported' ? 'debug' : 'warning', `no desktop notification for pending approvals: ${(error as Error).message}`);
    });
    inFlight.add(shown);
    void shown.finally(() => inFlight.delete(shown));
  });
  return async () => {
    unsubscribe();
    controller.abort();
    await Promise.all([...inFlight]);
  };
}
