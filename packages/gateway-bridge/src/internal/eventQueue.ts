import { createDeadline } from '@capnode/toolkit';
import type { ChannelEvent, ChannelEventFilter, ChannelEventGap } from '../channel/channelContract.js';

/** Longest `events_wait`. */
export const EVENTS_WAIT_MAX_MS = 300_000;

/** An event without its cursor; the queue numbers events from 1. */
export type UnnumberedChannelEvent = ChannelEvent extends infer E ? (E extends ChannelEvent ? Omit<E, 'cursor'> : never) : never;

/**
 * The channel bridge's event queue: numbered from cursor 1, the newest `limit` kept (a poll past
 * the oldest reports a `gap`), polling never consumes, and waits end on a matching event, a gap,
 * their deadline (the shared `createDeadline`) or abort.
 */
export interface EventQueue {
  push(event: UnnumberedChannelEvent): ChannelEvent;
  poll(filter: ChannelEventFilter, max: number): { events: ChannelEvent[]; nextCursor: number; gap?: ChannelEventGap };
  wait(filter: ChannelEventFilter, timeoutMs: number, signal?: AbortSignal): Promise<{ event: ChannelEvent | null; gap?: ChannelEventGap }>;
  /** Ends every wait with no event; later waits return at once. */
  close(): void;
}

export function matchesFilter(event: ChannelEvent, filter: ChannelEventFilter): boolean {
  if (event.cursor <= filter.afterCursor) return false;
  if (!filter.sessionKey) return true;
  return 'sessionKey' in event && event.sessionKey === filter.sessionKey;
}

interface Waiter {
  readonly filter: ChannelEventFilter;
  settle(event: ChannelEvent | null): void;
}

export function createEventQueue(limit: number): EventQueue {
  const queue: ChannelEvent[] = [];
  const waiters = new Set<Waiter>();
  let cursor = 0;
  let closed = false;
  const gap = (afterCursor: number): ChannelEventGap | undefined => {
    const oldest = queue[0]?.cursor;
    return oldest !== undefined && afterCursor < oldest - 1 ? { requested_after_cursor: afterCursor, oldest_available_cursor: oldest } : undefined;
  };
  return {
    push(unnumbered) {
      const event = { ...unnumbered, cursor: ++cursor } as ChannelEvent;
      queue.push(event);
      while (queue.length > limit) queue.shift();
      for (const waiter of [...waiters]) {
        const hit = matchesFilter(event, waiter.filter);
        if (hit || gap(waiter.filter.afterCursor)) waiter.settle(hit ? event : null);
      }
      return event;
    },
    poll(filter, max) {
      const events = queue.filter((event) => matchesFilter(event, filter)).slice(0, max);
      const missing = gap(filter.afterCursor);
      return { events, nextCursor: events.at(-1)?.cursor ?? (missing ? missing.oldest_available_cursor - 1 : filter.afterCursor), ...(missing ? { gap: missing } : {}) };
    },
    wait(filter, timeoutMs, signal) {
      const existing = queue.find((event) => matchesFilter(event, filter));
      const missing = gap(filter.afterCursor);
      if (existing || missing || closed || signal?.aborted) return Promise.resolve({ event: existing ?? null, ...(missing ? { gap: missing } : {}) });
      return new Promise((resolve) => {
        // unref: a pending wait must not keep a stdio server alive after its client left.
        const deadline = createDeadline({ timeoutMs: Math.min(timeoutMs, EVENTS_WAIT_MAX_MS), unref: true, ...(signal ? { signal } : {}) });
        let settled = false;
        const onEnd = () => waiter.settle(null);
        const waiter: Waiter = {
          filter,
          settle(event) {
            if (settled) return;
            settled = true;
            waiters.delete(waiter);
            deadline.clear();
            deadline.signal.removeEventListener('abort', onEnd);
            const current = gap(filter.afterCursor);
            resolve({ event, ...(current ? { gap: current } : {}) });
          },
        };
        deadline.signal.addEventListener('abort', onEnd, { once: true });
        waiters.add(waiter);
      });
    },
    close() {
      closed = true;
      for (const waiter of [...waiters]) waiter.settle(null);
    },
  };
}
