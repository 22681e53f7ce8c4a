// Live host state: the first status and approvals come from GET requests, later ones from the
// server-sent events of GET /api/events (`status`, `approvals`). EventSource reconnects by itself.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { underBase } from './base.js';
import type { AllowedView, ApprovalsView, PendingView, StatusView } from './types.js';

export interface LiveState {
  readonly status: StatusView | undefined;
  readonly pending: readonly PendingView[];
  /** Allowed requests whose call runs when the agent retries it. */
  readonly allowed: readonly AllowedView[];
  /** Whether the event stream is open (the page says so when it is not). */
  readonly connected: boolean;
}

let state: LiveState = { status: undefined, pending: [], allowed: [], connected: false };
const listeners = new Set<(next: LiveState) => void>();
let source: EventSource | undefined;

function set(change: Partial<LiveState>): void {
  state = { ...state, ...change };
  for (const listener of listeners) listener(state);
}

function parse<T>(data: string): T | undefined {
  try {
    return JSON.parse(data) as T;
  } catch {
    return undefined;
  }
}

/**
 * How many `status` and `approvals` events the stream delivered. A re-read keeps its answer only when no
 * event came while it was in flight: the GET and the stream are separate connections, and an answer read
 * before a change (an allowed request its retry just claimed) can arrive after the event that reports it.
 */
let statusEvents = 0;
let approvalsEvents = 0;

/** Re-reads status and approvals now (after an action, or when the stream reconnects). */
export async function refreshLive(): Promise<void> {
  const statusSeen = statusEvents;
  const approvalsSeen = approvalsEvents;
  const [status, approvals] = await Promise.allSettled([api<StatusView>('GET', '/api/status'), api<ApprovalsView>('GET', '/api/approvals')]);
  set({
    ...(status.status === 'fulfilled' && statusEvents === statusSeen ? { status: status.value } : {}),
    ...(approvals.status === 'fulfilled' && approvalsEvents === approvalsSeen ? { pending: approvals.value.pending, allowed: approvals.value.allowed ?? [] } : {}),
  });
}

/** Opens the event stream once per page load; each (re)connected stream starts with the full status and approvals. */
export function startLive(): void {
  if (source) return;
  source = new EventSource(underBase('/api/events'));
  source.addEventListener('open', () => set({ connected: true }));
  source.addEventListener('error', () => set({ connected: false }));
  source.addEventListener('status', (event) => {
    const status = parse<StatusView>((event as MessageEvent<string>).data);
    statusEvents += 1;
    if (status) set({ status });
  });
  source.addEventListener('approvals', (event) => {
    const approvals = parse<ApprovalsView>((event as MessageEvent<string>).data);
    approvalsEvents += 1;
    if (approvals) set({ pending: approvals.pending, allowed: approvals.allowed ?? [] });
  });
}

/** Removes answered requests at once, before the stream confirms it. */
export function dropPending(id: string): void {
  set({ pending: state.pending.filter((item) => item.id !== id) });
}

export function useLive(): LiveState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    listeners.add(setCurrent);
    setCurrent(state);
    return () => {
      listeners.delete(setCurrent);
    };
  }, []);
  return current;
}

/** The current time, ticking every second while mounted (for countdowns). */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
