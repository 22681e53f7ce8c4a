import { createStatusTicker, type StatusSnapshot, type StatusTicker } from '../statusTicker.js';
import type { DashboardHostView, Route, RouteContext } from '../types.js';
import { pendingViews } from './approvals.js';

export { STATUS_INTERVAL_MS } from '../statusTicker.js';
const KEEP_ALIVE_MS = 15_000;

/** One status ticker per dashboard host, shared by all of its event streams. */
const tickers = new WeakMap<DashboardHostView, StatusTicker>();

export function statusTickerOf(host: DashboardHostView): StatusTicker {
  let ticker = tickers.get(host);
  if (!ticker) {
    ticker = createStatusTicker({ status: () => host.status(), onError: (error) => host.log('error', `dashboard: reading the status failed: ${(error as Error)?.stack ?? String(error)}`) });
    tickers.set(host, ticker);
  }
  return ticker;
}

/**
 * `GET /api/events`: a server-sent event stream. `status` (the full host status) at once and then
 * whenever it changes, at most once a second; `approvals` (`{ pending }`) at once and on every change.
 * Ends when the client goes away or the host closes.
 */
function events({ host, signal }: RouteContext): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let stopped = false;
      const send = (chunk: string) => {
        if (stopped) return;
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          stop();
        }
      };
      const event = (name: string, data: unknown) => send(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      let lastStatus = '';
      const sendStatus = (snapshot: StatusSnapshot) => {
        if (snapshot.key === lastStatus) return;
        lastStatus = snapshot.key;
        send(snapshot.event);
      };
      let approvalsDirty = false;
      const unsubscribe = host.approvals.subscribe(() => {
        // Coalesced: a burst of requests is one event, sent after the broker settled.
        if (approvalsDirty) return;
        approvalsDirty = true;
        queueMicrotask(() => {
          approvalsDirty = false;
          event('approvals', pendingViews(host.approvals));
        });
      });
      const status = statusTickerOf(host).subscribe(sendStatus);
      const keepAlive = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
      stop = () => {
        if (stopped) return;
        stopped = true;
        unsubscribe();
        status.unsubscribe();
        clearInterval(keepAlive);
        signal.removeEventListener('abort', stop);
        host.signal.removeEventListener('abort', stop);
        try {
          controller.close();
        } catch {
          // Already closed by the reader.
        }
      };
      signal.addEventListener('abort', stop, { once: true });
      host.signal.addEventListener('abort', stop, { once: true });
      send('retry: 2000\n\n');
      sendStatus(status.current);
      event('approvals', pendingViews(host.approvals));
      if (signal.aborted || host.signal.aborted) stop();
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } });
}

export const eventRoutes: readonly Route[] = [['GET', '/api/events', events]];
