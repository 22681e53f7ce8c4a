import { authorizeApi, checkRequestOrigin, sessionCookie, type GateOptions } from './gate.js';
import { apiError, json } from './reply.js';
import { createRouter } from './router.js';
import { activityRoutes } from './routes/activity.js';
import { approvalRoutes } from './routes/approvals.js';
import { clientRoutes } from './routes/clients.js';
import { eventRoutes } from './routes/events.js';
import { execRoutes } from './routes/exec.js';
import { gatewayRoutes } from './routes/gateway.js';
import { serverRoutes } from './routes/servers.js';
import { serverImportRoutes } from './routes/serversImport.js';
import { sessionRoutes } from './routes/session.js';
import { settingsRoutes } from './routes/settings.js';
import { statusRoutes } from './routes/status.js';
import { tokenRoutes } from './routes/token.js';
import { DASHBOARD_SESSION_COOKIE, type DashboardSessions } from './sessions.js';
import { createStaticFiles, signInPage } from './static.js';
import { readCookie } from './gate.js';
import type { DashboardHostView, Route } from './types.js';

/** Every `/api/*` route, in the contract's order. */
export const DASHBOARD_ROUTES: readonly Route[] = [
  ...sessionRoutes,
  [
    'DELETE',
    '/api/session',
    ({ session, sessions }) => {
      // Ended on the host too: a copy of the cookie (another tab, a stolen value) opens nothing afterwards.
      sessions.end(session.id);
      return json(200, { ok: true }, { 'set-cookie': `${DASHBOARD_SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0` });
    },
  ],
  ...statusRoutes,
  ...eventRoutes,
  ...approvalRoutes,
  ...tokenRoutes,
  ...settingsRoutes,
  ...execRoutes,
  ...activityRoutes,
  ...clientRoutes,
  ...serverImportRoutes,
  ...serverRoutes,
  ...gatewayRoutes,
];

export interface DashboardHandlerOptions {
  readonly host: DashboardHostView;
  readonly sessions: DashboardSessions;
  readonly gate: () => GateOptions;
  readonly uiDir: string | undefined;
}

/** `GET /login?code=`: the one-time code for a session cookie, then 303 to `/` (or `/setup` on first run). */
function login(url: URL, options: DashboardHandlerOptions): Response {
  const code = url.searchParams.get('code') ?? '';
  const session = code ? options.sessions.exchange(code) : undefined;
  if (!session) return signInPage(403, 'This sign-in link was already used or has expired. Run `capnode ui` again for a new one.');
  options.host.log('info', 'dashboard: signed in a browser with a one-time link');
  return new Response(null, {
    status: 303,
    headers: { location: options.host.firstRun ? '/setup' : '/', 'set-cookie': sessionCookie(session), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  });
}

/**
 * `view` whose settings changes are logged by the paths they changed (never the values: they can
 * be secrets), whichever route made them (settings, servers, gateway).
 */
function auditedView(view: DashboardHostView): DashboardHostView {
  return {
    ...view,
    async patchSettings(patch) {
      const result = await view.patchSettings(patch);
      if (result.ok && result.changed.length > 0) view.log('info', `dashboard: settings changed: ${result.changed.join(', ')}`);
      return result;
    },
  };
}

/**
 * The dashboard's request handler: the Host and Origin gate on everything, `/login`, the session-
 * and CSRF-checked `/api/*` routes, and the built UI (its page only with a session).
 */
export function createDashboardHandler(options: DashboardHandlerOptions): (request: Request, context: { signal: AbortSignal }) => Promise<Response> {
  const route = createRouter(DASHBOARD_ROUTES);
  const files = createStaticFiles(options.uiDir);
  const host = auditedView(options.host);
  return async (request, { signal }) => {
    const gate = options.gate();
    const refused = checkRequestOrigin(request, gate);
    if (refused) return refused;
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const path = url.pathname;
    if (path === '/api' || path.startsWith('/api/')) {
      const session = authorizeApi(request, options.sessions, gate);
      if (session instanceof Response) return session;
      const match = route(method, path);
      if (match instanceof Response) return match;
      return match.handler({ request, session, sessions: options.sessions, params: match.params, url, signal, host });
    }
    if (method !== 'GET' && method !== 'HEAD') return apiError(405, 'method', 'only GET outside /api/');
    // Only a GET spends a code (a HEAD from a link preview must not).
    if (path === '/login') return method === 'GET' ? login(url, options) : apiError(405, 'method', 'use GET');
    if (path !== '/' && /\.[a-z0-9]+$/i.test(path)) {
      return (await files.file(path)) ?? apiError(404, 'not_found', `no file ${path}`);
    }
    const signedIn = options.sessions.get(readCookie(request.headers.get('cookie'), DASHBOARD_SESSION_COOKIE)) !== undefined;
    return signedIn ? files.index() : signInPage();
  };
}
