import { isHostError } from '../../errors.js';
import { auditedSettingsPatch, auditedTokenRotation } from '../../audit/controlAudit.js';
import { authorizeApi, checkRequestOrigin, clearedSessionCookie, readCookie, sessionCookie, stripBasePath, type GateOptions } from './gate.js';
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
import type { DashboardHostView, Route } from './types.js';

/** Every `/api/*` route, in the contract's order. */
export const DASHBOARD_ROUTES: readonly Route[] = [
  ...sessionRoutes,
  [
    'DELETE',
    '/api/session',
    ({ session, sessions, basePath, host }) => {
      // Ended on the host too: a copy of the cookie (another tab, a stolen value) opens nothing afterwards.
      sessions.end(session.id);
      host.audit({ command: 'capnode.session.signout' });
      return json(200, { ok: true }, { 'set-cookie': clearedSessionCookie(basePath) });
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
  /** The secret path everything but `/login` lives under, `/d/<random>` (see {@link createBasePath}). */
  readonly basePath: string;
}

/** `GET /login?code=`: the one-time code for a session cookie, then 303 to `<base>/` (or `<base>/setup` on first run). */
function login(url: URL, options: DashboardHandlerOptions): Response {
  const code = url.searchParams.get('code') ?? '';
  const session = code ? options.sessions.exchange(code) : undefined;
  if (!session) return signInPage(403, 'This sign-in link was already used or has expired. Run `capnode ui` again for a new one.');
  options.host.log('info', 'dashboard: signed in a browser with a one-time link');
  options.host.audit({ command: 'capnode.session.signin' });
  return new Response(null, {
    status: 303,
    headers: { location: `${options.basePath}/${options.host.firstRun ? 'setup' : ''}`, 'set-cookie': sessionCookie(session, options.basePath), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  });
}

/**
 * `view` whose settings changes and token rotations are logged and added to `audit.log`, settings
 * by the paths they changed (never the values: they can be secrets), whichever route made them
 * (settings, servers, gateway, import). A refused change is recorded with the paths it was refused
 * for (`invalid_settings`); one that throws as `failed`.
 */
function auditedView(view: DashboardHostView): DashboardHostView {
  return {
    ...view,
    async patchSettings(patch) {
      const result = await auditedSettingsPatch((value) => view.patchSettings(value), patch, (entry) => view.audit(entry));
      if (result.ok && result.changed.length > 0) view.log('info', `dashboard: settings changed: ${result.changed.join(', ')}`);
      return result;
    },
    rotateToken: () => auditedTokenRotation(() => view.rotateToken(), (entry) => view.audit(entry)),
  };
}

/**
 * The dashboard's request handler: the Host and Origin gate on everything; outside the secret base
 * path only `GET /login` and a "use `capnode ui`" page at `/` (a cookie there opens nothing: its
 * Path does not even match); under it the session- and CSRF-checked `api/*` routes and the built UI
 * (its page only with a session).
 */
export function createDashboardHandler(options: DashboardHandlerOptions): (request: Request, context: { signal: AbortSignal }) => Promise<Response> {
  const route = createRouter(DASHBOARD_ROUTES);
  const files = createStaticFiles(options.uiDir);
  const host = auditedView(options.host);
  const { basePath } = options;
  return async (request, { signal }) => {
    const gate = options.gate();
    const refused = checkRequestOrigin(request, gate);
    if (refused) return refused;
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const path = stripBasePath(url.pathname, basePath);
    if (path === undefined) return outside(url, method, options);
    if (path === '/api' || path.startsWith('/api/')) {
      const session = authorizeApi(request, options.sessions, gate);
      if (session instanceof Response) return session;
      const match = route(method, path);
      if (match instanceof Response) return match;
      try {
        return await match.handler({ request, session, sessions: options.sessions, params: match.params, url, signal, host, basePath });
      } catch (error) {
        // Another process (a CLI command) held settings.json's lock too long: retryable, nothing was written.
        if (isHostError(error) && error.code === 'settings_locked') return apiError(409, 'conflict', error.message);
        throw error;
      }
    }
    if (method !== 'GET' && method !== 'HEAD') return apiError(405, 'method', 'only GET outside /api/');
    if (path !== '/' && /\.[a-z0-9]+$/i.test(path)) {
      return (await files.file(path)) ?? apiError(404, 'not_found', `no file ${path}`);
    }
    // Page routes are one segment deep (`/setup`): the page's relative asset URLs resolve under the base.
    if (!/^\/[^/]*$/.test(path)) return apiError(404, 'not_found', 'no such page');
    const signedIn = options.sessions.get(readCookie(request.headers.get('cookie'), DASHBOARD_SESSION_COOKIE)) !== undefined;
    return signedIn ? files.index() : signInPage();
  };
}

/** A request outside the base path: `/login`, the sign-in hint at `/`, the base without its slash; nothing else. */
function outside(url: URL, method: string, options: DashboardHandlerOptions): Response {
  const path = url.pathname;
  if (method !== 'GET' && method !== 'HEAD') return apiError(405, 'method', 'only GET outside the dashboard');
  // Only a GET spends a code (a HEAD from a link preview must not).
  if (path === '/login') return method === 'GET' ? login(url, options) : apiError(405, 'method', 'use GET');
  if (path === '/') return signInPage();
  if (stripBasePath(`${path}/`, options.basePath) === '/') return new Response(null, { status: 308, headers: { location: `${options.basePath}/`, 'cache-control': 'no-store' } });
  return apiError(404, 'not_found', 'nothing here; open the dashboard with capnode ui');
}
