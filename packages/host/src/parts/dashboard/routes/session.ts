import type { SessionView } from '../apiTypes.js';
import { json } from '../reply.js';
import type { Route } from '../types.js';

/** `GET /api/session`: the page's CSRF token, the host version, and whether this is the first run. */
export const sessionRoutes: readonly Route[] = [
  ['GET', '/api/session', ({ session, host }) => json(200, { csrfToken: session.csrfToken, version: host.version, firstRun: host.firstRun } satisfies SessionView)],
];
