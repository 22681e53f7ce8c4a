import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DashboardStatusView } from './apiTypes.js';
import { createStatusTicker, STATUS_INTERVAL_MS } from './statusTicker.js';

function reading(uptimeSeconds: number, state = 'listening'): DashboardStatusView {
  return { version: '1.0.0', uptimeSeconds, mcp: { state }, pendingApprovals: 0 } as unknown as DashboardStatusView;
}

describe('createStatusTicker', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('keys a status without uptimeSeconds and serializes its event once per tick for every listener', async () => {
    let reads = 0;
    const ticker = createStatusTicker({ status: () => reading((reads += 1)) });
    const seen: string[][] = [[], []];
    const a = ticker.subscribe((snapshot) => seen[0]!.push(snapshot.event));
    const b = ticker.subscribe((snapshot) => seen[1]!.push(snapshot.event));
    expect(a.current.key).toBe(b.current.key);
    expect(a.current.event).toBe(`event: status\ndata: ${JSON.stringify(reading(1))}\n\n`);
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    expect(reads).toBe(3);
    // The very same string for both: serialized once.
    expect(seen[0]![0]).toBe(seen[1]![0]);
    a.unsubscribe();
    a.unsubscribe();
    expect(ticker.size).toBe(1);
    b.unsubscribe();
    expect(ticker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps ticking when one read throws, and reports it', async () => {
    let fail = false;
    const errors: unknown[] = [];
    const ticker = createStatusTicker({
      status: () => {
        if (fail) throw new Error('broken');
        return reading(1);
      },
      onError: (error) => errors.push(error),
    });
    const events: string[] = [];
    const subscription = ticker.subscribe((snapshot) => events.push(snapshot.key));
    fail = true;
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    fail = false;
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    expect(errors).toHaveLength(1);
    expect(events).toHaveLength(1);
    subscription.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });
});
