import type { DashboardStatusView } from './apiTypes.js';

/** How often the status is compared with the last one sent (so `status` events come at most once a second). */
export const STATUS_INTERVAL_MS = 1000;

/** One reading of the host status: its change key (without the fields that move every second) and its event chunk. */
export interface StatusSnapshot {
  readonly status: DashboardStatusView;
  /** Equal for two readings that differ only in `uptimeSeconds`. */
  readonly key: string;
  /** The `status` server-sent event, serialized once for every stream. */
  readonly event: string;
}

export interface StatusSubscription {
  /** The status read at subscription time, for the stream's first event. */
  readonly current: StatusSnapshot;
  unsubscribe(): void;
}

/**
 * One status timer shared by a dashboard's event streams: it runs only while a stream is
 * subscribed (an idle host has no timer and can exit) and reads and serializes the status once per
 * tick, whatever the number of streams.
 */
export interface StatusTicker {
  /** `listener` gets every tick's snapshot (streams skip those whose key they already sent). */
  subscribe(listener: (snapshot: StatusSnapshot) => void): StatusSubscription;
  /** Subscribed listeners (0 when idle). */
  readonly size: number;
}

export interface StatusTickerOptions {
  readonly status: () => DashboardStatusView;
  /** A tick whose status read threw (the streams keep their last status). */
  readonly onError?: (error: unknown) => void;
  /** Default {@link STATUS_INTERVAL_MS}. */
  readonly intervalMs?: number;
}

function readSnapshot(status: DashboardStatusView): StatusSnapshot {
  const { uptimeSeconds: _uptime, ...rest } = status;
  return { status, key: JSON.stringify(rest), event: `event: status\ndata: ${JSON.stringify(status)}\n\n` };
}

export function createStatusTicker(options: StatusTickerOptions): StatusTicker {
  const listeners = new Set<(snapshot: StatusSnapshot) => void>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const tick = () => {
    let snapshot: StatusSnapshot;
    try {
      snapshot = readSnapshot(options.status());
    } catch (error) {
      options.onError?.(error);
      return;
    }
    // A copy: a listener whose stream failed unsubscribes while this runs.
    for (const listener of [...listeners]) listener(snapshot);
  };

  return {
    get size() {
      return listeners.size;
    },
    subscribe(listener) {
      const current = readSnapshot(options.status());
      listeners.add(listener);
      timer ??= setInterval(tick, options.intervalMs ?? STATUS_INTERVAL_MS);
      let subscribed = true;
      return {
        current,
        unsubscribe() {
          if (!subscribed) return;
          subscribed = false;
          listeners.delete(listener);
          if (listeners.size === 0 && timer !== undefined) {
            clearInterval(timer);
            timer = undefined;
          }
        },
      };
    },
  };
}
