import type { ProgressUpdate } from '@capnode/capabilities';
import type { Client, Progress } from '@modelcontextprotocol/client';
import { scrubAndCap } from '../redact.js';

/** Longest progress message passed on. */
const MAX_PROGRESS_MESSAGE = 1_000;

/** Progress callbacks of the calls in flight, per client, by progress token. */
const routes = new WeakMap<Client, Map<string, (progress: Progress) => void>>();
let lastToken = 0;

/**
 * Adapts a server's `notifications/progress` to a capnode progress report: numbers must be finite
 * (others are dropped), the message is scrubbed and capped.
 */
export function forwardProgress(report: (update: ProgressUpdate) => void, scrub: (text: string) => string): (progress: Progress) => void {
  return (progress) => {
    if (typeof progress.progress !== 'number' || !Number.isFinite(progress.progress)) return;
    const total = typeof progress.total === 'number' && Number.isFinite(progress.total) ? progress.total : undefined;
    const message = typeof progress.message === 'string' ? scrubAndCap(progress.message, scrub, MAX_PROGRESS_MESSAGE) : undefined;
    report({ progress: progress.progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) });
  };
}

/**
 * Routes `notifications/progress` of this client by token to {@link withProgress} callers. Installed
 * instead of the SDK's own `onprogress` routing: the SDK drops a progress notification that arrives in
 * the same read as its response (the response handler runs first and forgets the token), so the last
 * report of a fast server was lost. Here a token stays routed until the call's promise has settled.
 */
export function routeProgress(client: Client): void {
  const handlers = new Map<string, (progress: Progress) => void>();
  routes.set(client, handlers);
  client.setNotificationHandler('notifications/progress', (notification) => {
    const { progressToken, ...progress } = notification.params;
    handlers.get(String(progressToken))?.(progress as Progress);
  });
}

/**
 * Runs one request with a progress token in its `_meta` when `onProgress` is given (and the client
 * routes progress), delivering the server's reports to it until the request settles.
 */
export function withProgress<T>(client: Client, onProgress: ((progress: Progress) => void) | undefined, run: (meta: { progressToken: string } | undefined) => Promise<T>): Promise<T> {
  const handlers = onProgress ? routes.get(client) : undefined;
  if (!handlers || !onProgress) return run(undefined);
  lastToken += 1;
  const progressToken = `capnode-${lastToken}`;
  handlers.set(progressToken, onProgress);
  return run({ progressToken }).finally(() => handlers.delete(progressToken));
}
