import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a one-time login code can be exchanged: 60 s. */
export const DASHBOARD_LOGIN_CODE_TTL_MS = 60_000;
/** A dashboard session unused for this long ends: 12 h. */
export const DASHBOARD_SESSION_IDLE_MS = 12 * 60 * 60_000;
/** Name of the session cookie. */
export const DASHBOARD_SESSION_COOKIE = 'capnode_session';
/** Most login codes waiting at once; minting more drops the oldest. */
const MAX_CODES = 64;
/** Most sessions at once; a new one ends the one idle the longest. */
const MAX_SESSIONS = 256;

/** A signed-in browser: its cookie value and the CSRF token its page sends back on every change. */
export interface DashboardSession {
  readonly id: string;
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeen: number;
}

export interface DashboardSessionsOptions {
  readonly codeTtlMs?: number;
  readonly idleMs?: number;
  /** Clock (tests). Default `Date.now`. */
  readonly now?: () => number;
}

/** One-time login codes and the sessions they were exchanged for; memory only, gone with the host. */
export interface DashboardSessions {
  /** A fresh code: single use, valid for `codeTtlMs`. */
  mintCode(): string;
  /** Exchanges a code once for a new session; `undefined` for an unknown, used or expired code. */
  exchange(code: string): DashboardSession | undefined;
  /** The live session with this cookie value (and marks it used), else `undefined`. */
  get(id: string | undefined): DashboardSession | undefined;
  /** Ends the session with this cookie value (sign-out): its cookie opens nothing any more. */
  end(id: string | undefined): void;
  /** True when `token` is the session's CSRF token (constant time). */
  checkCsrf(session: DashboardSession, token: string | undefined): boolean;
  /** Ends every session and forgets every code. */
  clear(): void;
  readonly size: number;
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Keys are digests, so a lookup never compares the secret itself byte by byte. */
function key(value: string): string {
  return digest(value).toString('hex');
}

/** Creates the in-memory session store of a dashboard. */
export function createDashboardSessions(options: DashboardSessionsOptions = {}): DashboardSessions {
  const codeTtlMs = options.codeTtlMs ?? DASHBOARD_LOGIN_CODE_TTL_MS;
  const idleMs = options.idleMs ?? DASHBOARD_SESSION_IDLE_MS;
  const now = options.now ?? (() => Date.now());
  const codes = new Map<string, number>();
  const sessions = new Map<string, DashboardSession>();

  const prune = () => {
    const at = now();
    for (const [code, expires] of codes) if (expires <= at) codes.delete(code);
    for (const [id, session] of sessions) if (at - session.lastSeen >= idleMs) sessions.delete(id);
  };

  return {
    mintCode() {
      prune();
      while (codes.size >= MAX_CODES) codes.delete(codes.keys().next().value as string);
      const code = secret();
      codes.set(key(code), now() + codeTtlMs);
      return code;
    },
    exchange(code) {
      prune();
      const hashed = key(code);
      const expires = codes.get(hashed);
      // Deleted before anything else: a code is spent by its first use, whatever happens next.
      codes.delete(hashed);
      if (expires === undefined || expires <= now()) return undefined;
      if (sessions.size >= MAX_SESSIONS) {
        const oldest = [...sessions.values()].sort((a, b) => a.lastSeen - b.lastSeen)[0];
        if (oldest) sessions.delete(key(oldest.id));
      }
      const at = now();
      const session: DashboardSession = { id: secret(), csrfToken: secret(), createdAt: at, lastSeen: at };
      sessions.set(key(session.id), session);
      return session;
    },
    get(id) {
      if (!id) return undefined;
      const hashed = key(id);
      const session = sessions.get(hashed);
      if (!session) return undefined;
      const at = now();
      if (at - session.lastSeen >= idleMs) {
        sessions.delete(hashed);
        return undefined;
      }
      session.lastSeen = at;
      return session;
    },
    end(id) {
      if (id) sessions.delete(key(id));
    },
    checkCsrf(session, token) {
      if (token === undefined) return false;
      return timingSafeEqual(digest(token), digest(session.csrfToken));
    },
    clear() {
      codes.clear();
      sessions.clear();
    },
    get size() {
      return sessions.size;
    },
  };
}
