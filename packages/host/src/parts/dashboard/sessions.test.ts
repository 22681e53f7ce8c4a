import { describe, expect, it } from 'vitest';
import { DASHBOARD_LOGIN_CODE_TTL_MS, DASHBOARD_SESSION_IDLE_MS, createDashboardSessions } from './sessions.js';

describe('dashboard sessions', () => {
  it('exchanges a login code exactly once', () => {
    const sessions = createDashboardSessions();
    const code = sessions.mintCode();
    const session = sessions.exchange(code);
    expect(session).toBeDefined();
    expect(sessions.exchange(code)).toBeUndefined();
    expect(sessions.get(session!.id)).toBe(session);
  });

  it('refuses a code after 60 s and an unknown code', () => {
    let now = 1_000;
    const sessions = createDashboardSessions({ now: () => now });
    const code = sessions.mintCode();
    now += DASHBOARD_LOGIN_CODE_TTL_MS;
    expect(sessions.exchange(code)).toBeUndefined();
    expect(sessions.exchange('not-a-code')).toBeUndefined();
    expect(sessions.exchange('')).toBeUndefined();
  });

  it('a code used once after expiry cannot be used again before it', () => {
    let now = 0;
    const sessions = createDashboardSessions({ now: () => now });
    const code = sessions.mintCode();
    now = DASHBOARD_LOGIN_CODE_TTL_MS - 1;
    expect(sessions.exchange(code)).toBeDefined();
    now = 0;
    expect(sessions.exchange(code)).toBeUndefined();
  });

  it('ends a session idle for 12 h, keeps one in use', () => {
    let now = 0;
    const sessions = createDashboardSessions({ now: () => now });
    const used = sessions.exchange(sessions.mintCode())!;
    const idle = sessions.exchange(sessions.mintCode())!;
    now = DASHBOARD_SESSION_IDLE_MS - 1;
    expect(sessions.get(used.id)).toBeDefined();
    now = DASHBOARD_SESSION_IDLE_MS + 10;
    expect(sessions.get(idle.id)).toBeUndefined();
    expect(sessions.get(used.id)).toBeDefined();
  });

  it('checks the CSRF token in full, and clear ends everything', () => {
    const sessions = createDashboardSessions();
    const session = sessions.exchange(sessions.mintCode())!;
    expect(sessions.checkCsrf(session, session.csrfToken)).toBe(true);
    expect(sessions.checkCsrf(session, session.csrfToken.slice(0, -1))).toBe(false);
    expect(sessions.checkCsrf(session, undefined)).toBe(false);
    const code = sessions.mintCode();
    sessions.clear();
    expect(sessions.get(session.id)).toBeUndefined();
    expect(sessions.exchange(code)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('codes and session ids are distinct high-entropy strings', () => {
    const sessions = createDashboardSessions();
    const codes = new Set(Array.from({ length: 50 }, () => sessions.mintCode()));
    expect(codes.size).toBe(50);
    for (const code of codes) expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('end() signs one session out; others stay', () => {
    const sessions = createDashboardSessions();
    const one = sessions.exchange(sessions.mintCode())!;
    const two = sessions.exchange(sessions.mintCode())!;
    sessions.end(one.id);
    sessions.end(undefined);
    sessions.end('no-such-session');
    expect(sessions.get(one.id)).toBeUndefined();
    expect(sessions.get(two.id)).toBe(two);
  });
});
