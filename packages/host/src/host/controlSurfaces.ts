import { homedir } from 'node:os';
import { createAdminHandler } from '../parts/admin/adminApi.js';
import { createDashboardService, type DashboardService } from '../parts/dashboard/service.js';
import type { Host } from './hostTypes.js';
import type { HostPaths } from '../config/paths.js';
import type { HostCore } from './hostCore.js';
import type { HostLog } from '../context/hostLogging.js';

export interface ControlSurfacesOptions {
  readonly core: HostCore;
  readonly paths: HostPaths;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  readonly log: HostLog;
  /** Aborting ends the admin and dashboard event streams (the host closes). */
  readonly signal: AbortSignal;
  /** The host they act on (status, token rotation, settings, dashboard login). */
  readonly host: () => Host;
  /** Settings changed that apply only after a restart. */
  readonly restartNeeded: () => readonly string[];
}

/** Where people act on the host: the web dashboard and the admin routes (`/_capnode/*`) the CLI and tray call. */
export function createControlSurfaces(options: ControlSurfacesOptions): { dashboard: DashboardService; adminHandler: (request: Request) => Promise<Response> } {
  const { core, env, host, signal } = options;
  const { approvals, audit } = core.pipeline;
  const dashboard = createDashboardService({
    config: () => core.settings.get().dashboard,
    view: {
      version: options.version,
      paths: options.paths,
      settings: core.settings,
      approvals,
      firstRun: core.firstRun,
      userHome: env.HOME || homedir(),
      env,
      signal,
      // The pending count on its own, as every dashboard page shows it.
      status: () => ({ ...host().status(), pendingApprovals: approvals.list().length }),
      rotateToken: () => host().rotateToken(),
      patchSettings: (patch) => host().patchSettings(patch),
      restartNeeded: options.restartNeeded,
      log: options.log,
      audit: (entry) => audit.record({ ...entry, transport: 'dashboard' }),
    },
  });
  const adminHandler = createAdminHandler({
    broker: approvals,
    status: () => host().status(),
    rotateToken: () => host().rotateToken(),
    dashboardLogin: () => host().dashboardLoginUrl(),
    patchSettings: (patch) => host().patchSettings(patch),
    audit: (entry) => audit.record({ ...entry, transport: 'admin' }),
    signal,
  });
  return { dashboard, adminHandler };
}
