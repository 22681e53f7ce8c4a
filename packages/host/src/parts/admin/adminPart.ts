import type { HostContext, HostControls } from '../../context/hostContext.js';
import { createAdminHandler } from './adminApi.js';

/** The admin routes (`/_capnode/*`) the CLI and tray call, served by the MCP listener and the admin-only ones. */
export function createAdminPart(context: HostContext, controls: HostControls): (request: Request) => Promise<Response> {
  const { approvals, audit } = context.pipeline;
  return createAdminHandler({
    broker: approvals,
    status: () => controls.status(),
    rotateToken: () => controls.rotateToken(),
    reloadTokens: () => controls.reloadTokens(),
    dashboardLogin: () => controls.dashboardLoginUrl(),
    patchSettings: (patch) => controls.patchSettings(patch),
    syncPlugins: () => controls.syncPlugins(),
    audit: (entry) => audit.record({ ...entry, transport: 'admin' }),
    signal: context.signal,
  });
}
