import { describe, expect, it } from 'vitest';
import { authorizeApi, checkRequestOrigin, clearedSessionCookie, createBasePath, readCookie, sessionCookie, stripBasePath } from './gate.js';
import { createDashboardSessions } from './sessions.js';

const gate = { origin: 'http://127.0.0.1:4000', hostHeader: '127.0.0.1:4000' };

function request(method: string, headers: Record<string, string>): Request {
  return new Request('http://127.0.0.1:4000/api/status', { method, headers });
}

async function code(response: unknown): Promise<string | undefined> {
  if (!(response instanceof Response)) return undefined;
  return ((await response.json()) as { error: { code: string } }).error.code;
}

describe('dashboard gate', () => {
  it('refuses any Host header but the dashboard’s own', async () => {
    expect(checkRequestOrigin(request('GET', { host: '127.0.0.1:4000' }), gate)).toBeUndefined();
    for (const host of ['evil.example:4000', 'localhost:4000', '127.0.0.1:4001', '127.0.0.1', '']) {
      const refused = checkRequestOrigin(request('GET', { host }), gate);
      expect(refused?.status, host).toBe(403);
      expect(await code(refused)).toBe('host');
    }
  });

  it('refuses a foreign Origin or cross-site fetch metadata on every method', async () => {
    for (const method of ['GET', 'POST']) {
      expect(checkRequestOrigin(request(method, { host: gate.hostHeader, origin: 'http://evil.example' }), gate)?.status).toBe(403);
      expect(checkRequestOrigin(request(method, { host: gate.hostHeader, origin: 'null' }), gate)?.status).toBe(403);
      expect(checkRequestOrigin(request(method, { host: gate.hostHeader, 'sec-fetch-site': 'cross-site' }), gate)?.status).toBe(403);
    }
    expect(checkRequestOrigin(request('GET', { host: gate.hostHeader, origin: gate.origin, 'sec-fetch-site': 'same-origin' }), gate)).toBeUndefined();
  });

  it('needs a live session, never accepts Authorization, and needs Origin + CSRF token to change anything', async () => {
    const sessions = createDashboardSessions();
    const session = sessions.exchange(sessions.mintCode())!;
    const cookie = sessionCookie(session, '/d/base').split(';')[0]!;
    expect(sessionCookie(session, '/d/base')).toMatch(/; HttpOnly; SameSite=Strict; Path=\/d\/base\/$/);
    expect(clearedSessionCookie('/d/base')).toMatch(/^capnode_session=; HttpOnly; SameSite=Strict; Path=\/d\/base\/; Max-Age=0$/);
    expect(authorizeApi(request('GET', { cookie }), sessions, gate)).toBe(session);
    expect(await code(authorizeApi(request('GET', {}), sessions, gate))).toBe('unauthorized');
    expect(await code(authorizeApi(request('GET', { authorization: 'Bearer x' }), sessions, gate))).toBe('unauthorized');
    expect(await code(authorizeApi(request('GET', { cookie, authorization: 'Bearer x' }), sessions, gate))).toBe('unauthorized');
    const ok = { cookie, origin: gate.origin, 'x-csrf-token': session.csrfToken };
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(authorizeApi(request(method, ok), sessions, gate)).toBe(session);
      expect(await code(authorizeApi(request(method, { cookie, 'x-csrf-token': session.csrfToken }), sessions, gate))).toBe('origin');
      expect(await code(authorizeApi(request(method, { ...ok, origin: 'http://localhost:4000' }), sessions, gate))).toBe('origin');
      expect(await code(authorizeApi(request(method, { ...ok, 'x-csrf-token': 'wrong' }), sessions, gate))).toBe('csrf');
      expect(await code(authorizeApi(request(method, { cookie, origin: gate.origin }), sessions, gate))).toBe('csrf');
    }
  });

  it('reads one cookie among several', () => {
    expect(readCookie('a=1; capnode_session=abc; b=2', 'capnode_session')).toBe('abc');
    expect(readCookie('xcapnode_session=abc', 'capnode_session')).toBeUndefined();
    expect(readCookie(null, 'capnode_session')).toBeUndefined();
  });

  it('makes an unguessable base path per call and finds a path under it, never outside it', () => {
    const base = createBasePath();
    expect(base).toMatch(/^\/d\/[A-Za-z0-9_-]{43}$/);
    expect(createBasePath()).not.toBe(base);
    expect(stripBasePath(`${base}/`, base)).toBe('/');
    expect(stripBasePath(`${base}/api/status`, base)).toBe('/api/status');
    for (const outside of ['/', '/api/status', base, `${base}x/`, `${base.slice(0, -1)}/`, `/d/${base.slice(3).toUpperCase()}/`, `/x${base}/`, '/d//']) {
      expect(stripBasePath(outside, base), outside).toBeUndefined();
    }
  });
});
