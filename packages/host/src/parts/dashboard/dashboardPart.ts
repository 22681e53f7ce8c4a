import { homedir } from 'node:os';
import type { HostContext, HostControls } from '../../context/hostContext.js';
import { createDashboardService, type DashboardService } from './service.js';

/** The web dashboard of the host: nothing listens until the host starts it. */
export function createDashboardPart(context: HostContext, controls: HostControls): DashboardService {
  const { settings, env } = context;
  const { approvals, audit } = context.pipeline;
  return createDashboardService({
    config: () => settings.get().dashboard,
    view: {
      version: context.version,
      paths: context.paths,
      settings,
      approvals,
      firstRun: context.firstRun,
      userHome: env.HOME || homedir(),
      env,
      signal: context.signal,
      // The pending count on its own, as every dashboard page shows it.
      status: () => ({ ...controls.status(), pendingApprovals: approvals.list().length }),
      rotateToken: () => controls.rotateToken(),
      reloadTokens: () => controls.reloadTokens(),
      patchSettings: (patch) => controls.patchSettings(patch),
      restartNeeded: () => controls.restartNeeded(),
      log: context.logging.log,
      audit: (entry) => audit.record({ ...entry, transport: 'dashboard' }),
    },
  });
}
