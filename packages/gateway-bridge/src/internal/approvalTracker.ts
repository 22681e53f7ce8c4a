import type { PendingGatewayApproval } from '../channel/channelContract.js';

/** How long a tracked gateway approval stays open without its own `expiresAtMs`. */
export const PENDING_APPROVAL_TTL_MS = 30 * 60_000;
/** How long a Claude permission request waits for a `yes <code>` / `no <code>` reply. */
export const PENDING_PERMISSION_TTL_MS = 60 * 60_000;
const SWEEP_INTERVAL_MS = 5 * 60_000;

/**
 * Pending gateway approvals (exec and plugin, from `*.approval.requested|resolved`) and Claude
 * permission requests, each dropped after its expiry by a sweep on an unref'd timer that runs
 * only while something is pending.
 */
export interface ApprovalTracker {
  track(kind: 'exec' | 'plugin', payload: Record<string, unknown>): void;
  resolved(id: string): void;
  list(): PendingGatewayApproval[];
  addPermission(requestId: string): void;
  /** True when `requestId` is pending. */
  hasPermission(requestId: string): boolean;
  deletePermission(requestId: string): void;
  sweep(at?: number): void;
  close(): void;
}

export function createApprovalTracker(now: () => number): ApprovalTracker {
  const approvals = new Map<string, { approval: PendingGatewayApproval; trackedAt: number }>();
  const permissions = new Map<string, number>();
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const sweep = (at = now()) => {
    for (const [id, createdAt] of permissions) if (at - createdAt >= PENDING_PERMISSION_TTL_MS) permissions.delete(id);
    for (const [id, entry] of approvals) if (at >= (entry.approval.expiresAtMs ?? entry.trackedAt + PENDING_APPROVAL_TTL_MS)) approvals.delete(id);
    if (sweepTimer && permissions.size === 0 && approvals.size === 0) {
      clearInterval(sweepTimer);
      sweepTimer = undefined;
    }
  };
  const ensureSweeper = () => {
    if (sweepTimer || closed) return;
    sweepTimer = setInterval(() => sweep(), SWEEP_INTERVAL_MS);
    // Pending approvals must never keep a stdio server alive after its client left.
    (sweepTimer as { unref?: () => void }).unref?.();
  };
  return {
    track(kind, payload) {
      const id = typeof payload.id === 'string' ? payload.id.trim() : '';
      if (!id || closed) return;
      const request = payload.request;
      approvals.set(id, {
        approval: {
          kind,
          id,
          ...(typeof request === 'object' && request !== null && !Array.isArray(request) ? { request: request as Record<string, unknown> } : {}),
          ...(typeof payload.createdAtMs === 'number' ? { createdAtMs: payload.createdAtMs } : {}),
          ...(typeof payload.expiresAtMs === 'number' ? { expiresAtMs: payload.expiresAtMs } : {}),
        },
        trackedAt: now(),
      });
      ensureSweeper();
    },
    resolved(id) {
      approvals.delete(id);
    },
    list() {
      sweep();
      return [...approvals.values()].map((entry) => entry.approval).sort((a, b) => (a.createdAtMs ?? 0) - (b.createdAtMs ?? 0));
    },
    addPermission(requestId) {
      if (closed) return;
      permissions.set(requestId, now());
      ensureSweeper();
    },
    hasPermission: (requestId) => permissions.has(requestId),
    deletePermission(requestId) {
      permissions.delete(requestId);
    },
    sweep,
    close() {
      closed = true;
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = undefined;
      approvals.clear();
      permissions.clear();
    },
  };
}
