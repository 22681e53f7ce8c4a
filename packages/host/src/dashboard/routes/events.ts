import type { Route, RouteContext } from '../types.js';
import { pendingViews } from './approvals.js';

/** How often the status is compared with the last one sent (so `status` events come at most once a second). */
export const STATUS_INTERVAL_MS = 1000;
const KEEP_ALIVE_MS = 15_000;

/** The status without the fields that change every second by themselves. */
function statusKey(status: Record<string, unknown>): string {
  const { uptimeSeconds: _uptime, ...rest } = status;
  return JSON.stringify(rest);
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
      const sendStatus = () => {
        const status = host.status();
        const key = statusKey(status);
        if (key === lastStatus) return;
        lastStatus = key;
        event('status', status);
      };
      let approvalsDirty = false;
      const unsubscribe = host.approvals.subscribe(() => {
        // Coalesced: a burst of requests is one event, sent after the broker settled.
        if (approvalsDirty) return;
        approvalsDirty = true;
        queueMicrotask(() => {
          approvalsDirty = false;
          event('approvals', pendingViews(host.approvals.list()));
        });
      });
      const statusTimer = setInterval(sendStatus, STATUS_INTERVAL_MS);
      const keepAlive = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
      stop = () => {
        if (stopped) return;
        stopped = true;
        unsubscribe();
        clearInterval(statusTimer);
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
      sendStatus();
      event('approvals', pendingViews(host.approvals.list()));
      if (signal.aborted || host.signal.aborted) stop();
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } });
}

export const eventRoutes: readonly Route[] = [['GET', '/api/events', events]];
