import type { HostStatus, OpenAgentStatus } from '@capnode/host';
import type { Context } from '../context.js';
import { CliError, hostFailure } from '../errors.js';
import { runningStatuses } from './gateway.js';

const USAGE = 'usage: capnode openagent enable | disable | status [--json]';

async function openStore(context: Context) {
  const module = await import('@capnode/host/settings');
  try {
    return { module, store: module.createSettingsStore(context.paths.settings) };
  } catch (error) {
    hostFailure(error, module);
  }
}

/** What is still missing for the channel to connect. */
function missingSettings(section: { url?: string | undefined; deviceId?: string | undefined; accountId?: string | undefined }): string[] {
  return [section.url ? '' : 'url', section.deviceId ? '' : 'deviceId', section.accountId ? '' : 'accountId'].filter(Boolean).map((name) => `openagent.${name}`);
}

function printStatus(context: Context, status: OpenAgentStatus, pid: number): void {
  context.out(`OpenAgent client capabilities (host pid ${pid}): ${status.phase}`);
  context.out(`  switch:       ${status.enabled ? 'on' : 'off'}   (capnode openagent ${status.enabled ? 'disable' : 'enable'})`);
  if (status.url) context.out(`  server:       ${status.url}`);
  context.out(`  instance:     ${status.clientInstanceId}, generation ${status.generation}`);
  context.out(`  calls:        ${status.activeCalls} running`);
  context.out(`  catalog:      ${status.catalog.servers} servers, ${status.catalog.tools} tools${status.catalog.dropped ? ` (${status.catalog.dropped} left out for the quotas)` : ''}`);
  if (status.lastError) context.out(`  last error:   ${status.lastError}`);
  context.out(`  ${status.detail}`);
}

async function status(context: Context): Promise<number> {
  const running = (await runningStatuses(context)).find((entry: HostStatus) => entry.openagent !== undefined);
  if (running) {
    if (context.json) context.out(JSON.stringify({ running: true, pid: running.pid, ...running.openagent }, null, 2));
    else printStatus(context, running.openagent, running.pid);
    return 0;
  }
  const { store } = await openStore(context);
  const section = store.get().openagent;
  const missing = missingSettings(section);
  const offline = {
    running: false,
    enabled: section.enabled,
    phase: section.enabled ? 'unavailable' : 'disabled',
    ...(section.url ? { url: section.url } : {}),
    ...(missing.length ? { missing } : {}),
  };
  if (context.json) {
    context.out(JSON.stringify(offline, null, 2));
    return 0;
  }
  context.out(`OpenAgent client capabilities: ${offline.phase} (no host running)`);
  context.out(`  switch:       ${section.enabled ? 'on' : 'off'} in ${context.paths.settings}`);
  if (section.url) context.out(`  server:       ${section.url}`);
  if (missing.length) context.out(`  missing:      ${missing.join(', ')}`);
  context.out('  start it:     capnode serve');
  return 0;
}

/**
 * `capnode openagent enable | disable | status`: the one device-level consent switch of OpenAgent's
 * client capabilities (`openagent.enabled`). A running host applies a change within a second:
 * enabling connects, disabling closes the channel and cancels running calls.
 */
export async function openagent(context: Context): Promise<number> {
  const [, action, extra] = context.args.positionals;
  if (extra !== undefined) throw new CliError('usage', `unexpected argument '${extra}' — ${USAGE}`);
  if (action === undefined || action === 'status') return status(context);
  if (action !== 'enable' && action !== 'disable') throw new CliError('usage', `unknown action '${action}' — ${USAGE}`);
  const { module, store } = await openStore(context);
  const enabled = action === 'enable';
  let next;
  try {
    next = await store.update((settings) => ({ ...settings, openagent: { ...settings.openagent, enabled } }));
  } catch (error) {
    hostFailure(error, module);
  }
  const missing = missingSettings(next.openagent);
  if (context.json) {
    context.out(JSON.stringify({ enabled, phase: enabled ? 'connecting' : 'disabled', ...(missing.length ? { missing } : {}) }, null, 2));
    return 0;
  }
  if (!enabled) {
    context.out('OpenAgent client capabilities: off — a running host closes the channel and cancels running calls');
    return 0;
  }
  context.out('OpenAgent client capabilities: on — a running host connects within a second (state: capnode openagent status)');
  if (missing.length) context.out(`  still missing in ${context.paths.settings}: ${missing.join(', ')}`);
  return 0;
}
