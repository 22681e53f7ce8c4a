import { HOME_ENV } from '../../config/paths.js';
import type { HostContext, HostPart } from '../../context/hostContext.js';
import { describePending, startApprovalNotifier } from './approvalNotices.js';

export interface ApprovalsPartOptions {
  /** Desktop notifications of pending approvals (when settings say so too). */
  readonly notifications: boolean;
}

/**
 * Announces each pending approval in the host log (and how it ended, unless answered) and, unless
 * turned off, on the desktop. Closing denies what is still pending, so the listeners drain at once.
 */
export function createApprovalsPart(context: HostContext, options: ApprovalsPartOptions): HostPart {
  const { env, paths, settings, logging } = context;
  const { approvals } = context.pipeline;
  const stopNotifier = startApprovalNotifier({ broker: approvals, enabled: () => options.notifications && settings.get().approvals.notify, env, log: logging.log });
  const homeHint = env[HOME_ENV] ? `CAPNODE_HOME=${paths.home} ` : '';
  approvals.subscribe((event) => {
    if (event.type === 'requested') logging.log('warning', describePending(event.approval, homeHint));
    else if (event.type === 'resolved' && event.settlement !== 'answered') logging.log('info', `approval ${event.approval.id} ${event.settlement === 'timeout' ? 'timed out (denied)' : `ended: ${event.settlement}`}`);
  });
  return {
    async close() {
      await approvals.close();
      await stopNotifier();
    },
  };
}
