import type { PendingApproval } from '@capnode/capabilities';
import type { Host, HostOptions } from '@capnode/host';
import { readServerSentEvents } from '@capnode/host/setup';
import { readTokenFile, type HostPaths } from '@capnode/host/setup';
import { delay } from '@capnode/toolkit';
import { adminRequest, discoverAdminTarget, type AdminTarget } from './adminClient.js';
import { TrayError } from './errors.js';
import type { TrayHostStatus } from './menu.js';

/** A partial settings change, as `PATCH /_capnode/settings` takes it. */
export type SettingsPatch = Readonly<Record<string, unknown>>;

/** What the tray does with a host, whether it runs the host itself or attached to a running one. */
export interface TrayHostLink {
  readonly mode: 'in-process' | 'attached';
  readonly paths: HostPaths;
  /** @throws TrayError `host_unreachable`, `unauthorized`, `request_failed`. */
  status(signal?: AbortSignal): Promise<TrayHostStatus>;
  /** Calls `onChange` with every pending approval, now and after each change, until the returned function is called. */
  watchApprovals(onChange: (pending: readonly PendingApproval[]) => void): () => void;
  /** Applies a settings change the way the dashboard does (validated, applied live where the host can). */
  patchSettings(patch: SettingsPatch, signal?: AbortSignal): Promise<void>;
  /** A one-time login URL of the dashboard (`POST /_capnode/ui/login`). */
  loginUrl(signal?: AbortSignal): Promise<string>;
  /** The MCP bearer token clients use, or `undefined` before the host created it. */
  mcpToken(): string | undefined;
  close(): Promise<void>;
}

/** Delay before the approval event stream reconnects, growing to 10 s. */
const RECONNECT_MS = [500, 1_000, 2_000, 5_000, 10_000] as const;

function readMcpToken(paths: HostPaths): string | undefined {
  try {
    return readTokenFile(paths.mcpToken);
  } catch {
    return undefined;
  }
}

/** Applies one approval event to the pending set; `false` for events that change nothing. */
function applyApprovalEvent(pending: Map<string, PendingApproval>, event: string, data: string): boolean {
  let value: { approvals?: PendingApproval[]; approval?: PendingApproval };
  try {
    value = JSON.parse(data) as typeof value;
  } catch {
    return false;
  }
  if (event === 'snapshot' && Array.isArray(value.approvals)) {
    pending.clear();
    for (const approval of value.approvals) pending.set(approval.id, approval);
    return true;
  }
  if (event === 'requested' && value.approval) pending.set(value.approval.id, value.approval);
  else if (event === 'resolved' && value.approval) pending.delete(value.approval.id);
  else return false;
  return true;
}

/**
 * Follows `GET /_capnode/approvals/events` of whatever host `target()` names, reconnecting after
 * each loss (the host may restart); returns the function that stops it.
 */
export function followApprovalEvents(target: () => AdminTarget | undefined, onChange: (pending: readonly PendingApproval[]) => void): () => void {
  const controller = new AbortController();
  const pending = new Map<string, PendingApproval>();
  let failures = 0;
  const run = async () => {
    while (!controller.signal.aborted) {
      const current = target();
      try {
        if (!current) throw new Error('no host');
        const response = await fetch(new URL('approvals/events', current.url), {
          headers: current.token === undefined ? {} : { authorization: `Bearer ${current.token}` },
          signal: controller.signal,
        });
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        failures = 0;
        for await (const { event, data } of readServerSentEvents(response.body, { signal: controller.signal })) {
          if (applyApprovalEvent(pending, event, data)) onChange([...pending.values()]);
        }
      } catch {
        // Unreachable or dropped: retried below.
      }
      if (controller.signal.aborted) return;
      if (pending.size > 0) {
        pending.clear();
        onChange([]);
      }
      const pause = RECONNECT_MS[Math.min(failures++, RECONNECT_MS.length - 1)]!;
      // Ends early on stop; the loop then sees the aborted signal.
      await delay(pause, { signal: controller.signal, unref: true }).catch(() => undefined);
    }
  };
  void run();
  return () => controller.abort();
}

function requireTarget(paths: HostPaths): AdminTarget {
  const target = discoverAdminTarget(paths);
  if (!target) throw new TrayError('host_unreachable', `no capnode host runs for ${paths.home} (no live host.json or run/node-*.json) — start one with: capnode serve, or start the tray without --attach`);
  return target;
}

async function requestLoginUrl(target: AdminTarget, signal?: AbortSignal): Promise<string> {
  const body = await adminRequest<{ url?: unknown }>(target, 'ui/login', { method: 'POST', body: {}, ...(signal ? { signal } : {}) });
  if (typeof body?.url !== 'string') throw new TrayError('request_failed', 'the host answered POST /_capnode/ui/login without a url');
  return body.url;
}

/** A link to the host another process runs on `paths`, over its admin routes (admin token from `paths.adminToken`). */
export function createAttachedLink(paths: HostPaths): TrayHostLink {
  const stops = new Set<() => void>();
  return {
    mode: 'attached',
    paths,
    status: async (signal) => adminRequest<TrayHostStatus>(requireTarget(paths), 'status', signal ? { signal } : {}),
    watchApprovals(onChange) {
      const stop = followApprovalEvents(() => discoverAdminTarget(paths), onChange);
      stops.add(stop);
      return () => {
        stops.delete(stop);
        stop();
      };
    },
    async patchSettings(patch, signal) {
      await adminRequest(requireTarget(paths), 'settings', { method: 'PATCH', body: patch, ...(signal ? { signal } : {}) });
    },
    loginUrl: async (signal) => requestLoginUrl(requireTarget(paths), signal),
    mcpToken: () => readMcpToken(paths),
    async close() {
      for (const stop of stops) stop();
      stops.clear();
    },
  };
}

/**
 * The options of the host the tray runs in this process (`createHost(inProcessHostOptions(...))`):
 * the host's own desktop notification per pending approval is off, since the tray raises its own,
 * actionable one ("Open approvals"); a request is announced once.
 */
export function inProcessHostOptions(options: HostOptions = {}): HostOptions {
  return { ...options, approvalNotifications: false };
}

/**
 * A link to a host this process runs (created with {@link inProcessHostOptions}): status, approvals, settings and the dashboard login straight
 * from the host object (no HTTP, so "Resume MCP server" works while the listener is stopped).
 */
export function createInProcessLink(host: Host): TrayHostLink {
  return {
    mode: 'in-process',
    paths: host.paths,
    status: async () => host.status(),
    watchApprovals(onChange) {
      onChange(host.approvals.list());
      return host.approvals.subscribe(() => onChange(host.approvals.list()));
    },
    async patchSettings(patch) {
      const result = await host.patchSettings(patch);
      if (!result.ok) throw new TrayError('request_failed', `${result.message}${result.fields.length > 0 ? ` (${result.fields.map((field) => `${field.path}: ${field.message}`).join('; ')})` : ''}`);
    },
    async loginUrl() {
      try {
        return host.dashboardLoginUrl();
      } catch (error) {
        throw new TrayError('request_failed', (error as Error).message, { cause: error });
      }
    },
    mcpToken: () => readMcpToken(host.paths),
    close: () => host.close(),
  };
}
