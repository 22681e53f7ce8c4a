import { json } from '../reply.js';
import type { Route } from '../types.js';

/** `GET /api/status`: the host status, as `capnode status --json` shows it. */
export const statusRoutes: readonly Route[] = [['GET', '/api/status', ({ host }) => json(200, host.status())]];
