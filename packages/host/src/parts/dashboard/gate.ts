import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DASHBOARD_SESSION_COOKIE, type DashboardSession, type DashboardSessions } from './sessions.js';
import { apiError } from './reply.js';

/** Methods that change something: they need the exact Origin and the CSRF token. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The value of cookie `name` in a `Cookie` header. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index === -1) continue;
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

/**
 * A fresh dashboard base path, `/d/<32 random bytes, base64url>` (no trailing slash). The whole
 * dashboard lives under it and the session cookie is scoped to it: cookies are not isolated by port,
 * so a cookie for `Path=/` would reach every other server on 127.0.0.1 the browser visits.
 */
export function createBasePath(): string {
  return `/d/${randomBytes(32).toString('base64url')}`;
}

/**
 * The rest of `path` under `basePath` (starting with `/`), or `undefined` when `path` is outside it.
 * The secret segment is compared by digest in constant time.
 */
export function stripBasePath(path: string, basePath: string): string | undefined {
  const match = /^(\/d\/[^/]*)(\/.*)?$/.exec(path);
  if (!match || match[2] === undefined) return undefined;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(match[1]!), digest(basePath)) ? match[2] : undefined;
}

/** The `Set-Cookie` value of a new session: HttpOnly, SameSite=Strict, only under the dashboard's base path. */
export function sessionCookie(session: DashboardSession, basePath: string): string {
  return `${DASHBOARD_SESSION_COOKIE}=${session.id}; HttpOnly; SameSite=Strict; Path=${basePath}/`;
}

/** The `Set-Cookie` value that removes the session cookie (sign-out). */
export function clearedSessionCookie(basePath: string): string {
  return `${DASHBOARD_SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=${basePath}/; Max-Age=0`;
}

export interface GateOptions {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** `127.0.0.1:<port>`. */
  readonly hostHeader: string;
}

/**
 * Checks that apply to every request, before routing: the Host header is exactly the dashboard's
 * (a DNS-rebound name is refused), and a request another site's page makes (an Origin that is not
 * the dashboard's, `Sec-Fetch-Site: cross-site` or `same-site`) is refused whatever its method.
 * Returns the refusal, or `undefined` to go on.
 */
export function checkRequestOrigin(request: Request, gate: GateOptions): Response | undefined {
  if (request.headers.get('host') !== gate.hostHeader) {
    return apiError(403, 'host', `the Host header must be ${gate.hostHeader} (open the dashboard with capnode ui)`);
  }
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== gate.origin) return apiError(403, 'origin', 'requests from another origin are refused');
  const site = request.headers.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') return apiError(403, 'origin', 'requests from another site are refused');
  return undefined;
}

/**
 * The session of an `/api/*` request, or its refusal: an `Authorization` header is refused (401; the
 * MCP token never opens the dashboard), so is a missing or ended session (401); a state-changing
 * method needs `Origin` exactly the dashboard's (403 `origin`) and `X-CSRF-Token` equal to the
 * session's (403 `csrf`).
 */
export function authorizeApi(request: Request, sessions: DashboardSessions, gate: GateOptions): DashboardSession | Response {
  if (request.headers.has('authorization')) return apiError(401, 'unauthorized', 'the dashboard API takes no Authorization header; sign in with capnode ui');
  const session = sessions.get(readCookie(request.headers.get('cookie'), DASHBOARD_SESSION_COOKIE));
  if (!session) return apiError(401, 'unauthorized', 'not signed in (or the session ended); open the dashboard with capnode ui');
  if (STATE_CHANGING.has(request.method.toUpperCase())) {
    if (request.headers.get('origin') !== gate.origin) return apiError(403, 'origin', `changes need the Origin header ${gate.origin}`);
    if (!sessions.checkCsrf(session, request.headers.get('x-csrf-token') ?? undefined)) return apiError(403, 'csrf', 'missing or wrong X-CSRF-Token');
  }
  return session;
}
