import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RouteContext, DashboardHostView } from '../types.js';
import { eventRoutes, STATUS_INTERVAL_MS, statusTickerOf } from './events.js';

const handler = eventRoutes[0]![2];

/** A dashboard host view that counts its status reads; `mcp.state` is what a test changes. */
function fakeHost() {
  let reads = 0;
  let state = 'listening';
  const closed = new AbortController();
  const host = {
    status: () => {
      reads += 1;
      return { version: '1.0.0', uptimeSeconds: reads, mcp: { state }, pendingApprovals: 0 };
    },
    approvals: { subscribe: () => () => {}, list: () => [], answered: () => [] },
    signal: closed.signal,
    log: () => {},
  } as unknown as DashboardHostView;
  return {
    host,
    reads: () => reads,
    setState: (next: string) => (state = next),
    close: () => closed.abort(),
  };
}

/** Opens `GET /api/events` and collects the `mcp.state` of every `status` event it sends. */
async function openStream(host: DashboardHostView) {
  const client = new AbortController();
  const response = await handler({ host, signal: client.signal } as unknown as RouteContext);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const states: string[] = [];
  let text = '';
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n')) {
        const chunk = text.slice(0, end);
        text = text.slice(end + 2);
        const data = /^event: status\ndata: (.*)$/m.exec(chunk)?.[1];
        if (data) states.push((JSON.parse(data) as { mcp: { state: string } }).mcp.state);
      }
    }
  })();
  await vi.advanceTimersByTimeAsync(0);
  return {
    states,
    async close() {
      client.abort();
      await pump;
    },
  };
}

/** Opens `count` streams on `host`, one after the other. */
async function openStreams(host: DashboardHostView, count: number) {
  const streams = [];
  for (let index = 0; index < count; index += 1) streams.push(await openStream(host));
  return streams as [Awaited<ReturnType<typeof openStream>>, Awaited<ReturnType<typeof openStream>>];
}

describe('GET /api/events status ticker', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('reads the status once per tick for all open streams and sends each stream only changes', async () => {
    const { host, reads, setState } = fakeHost();
    const [first, second] = await openStreams(host, 2);
    // One read per stream at open: each starts with the current status.
    expect(reads()).toBe(2);
    expect(first.states).toEqual(['listening']);
    expect(second.states).toEqual(['listening']);

    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    expect(reads()).toBe(3);
    // Only uptimeSeconds moved: nothing sent.
    expect(first.states).toEqual(['listening']);

    setState('error');
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    expect(reads()).toBe(4);
    expect(first.states).toEqual(['listening', 'error']);
    expect(second.states).toEqual(['listening', 'error']);

    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS * 3);
    expect(reads()).toBe(7);
    expect(first.states).toEqual(['listening', 'error']);
    await first.close();
    await second.close();
  });

  it('leaves no timer once the last stream closes, and starts again for a new stream', async () => {
    const { host, reads } = fakeHost();
    const [first, second] = await openStreams(host, 2);
    await first.close();
    expect(statusTickerOf(host).size).toBe(1);
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    expect(reads()).toBe(3);
    await second.close();
    expect(statusTickerOf(host).size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS * 5);
    expect(reads()).toBe(3);

    const third = await openStream(host);
    expect(third.states).toEqual(['listening']);
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    expect(reads()).toBe(5);
    await third.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives a stream opened between ticks the current status at once, not the last tick', async () => {
    const { host, setState } = fakeHost();
    const first = await openStream(host);
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    setState('stopped');
    const later = await openStream(host);
    expect(later.states).toEqual(['stopped']);
    expect(first.states).toEqual(['listening']);
    await vi.advanceTimersByTimeAsync(STATUS_INTERVAL_MS);
    // The earlier stream learns of the change at the next tick; the later one already had it.
    expect(first.states).toEqual(['listening', 'stopped']);
    expect(later.states).toEqual(['stopped']);
    await first.close();
    await later.close();
  });

  it('ends every stream and stops the ticker when the host closes', async () => {
    const { host, close } = fakeHost();
    const [first, second] = await openStreams(host, 2);
    close();
    await Promise.all([first.close(), second.close()]);
    expect(statusTickerOf(host).size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
