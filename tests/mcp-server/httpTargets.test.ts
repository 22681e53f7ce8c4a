// The admin routes cannot be reached with the MCP token through any spelling of their path: the server
// gates and routes on one canonical path and refuses (400) every target that a URL parser or router
// could read as another path. Raw `net` requests, because fetch and http.request normalise targets.
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, TOKEN, netRequest, useAdminFixtureServer } from './helpers.js';

describe('HTTP request targets', () => {
  const suite = useAdminFixtureServer();
  const { adminCalls } = suite;
  let port: number;
  beforeAll(() => {
    port = suite.server.port;
  });

  const mcp = { authorization: `Bearer ${TOKEN}` };
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  it('serves the canonical admin path with the admin token only', async () => {
    expect((await netRequest(port, '/_capnode/status', { headers: admin })).status).toBe(200);
    expect((await netRequest(port, '/_capnode/status?x=1', { headers: admin })).status).toBe(200);
    expect((await netRequest(port, '/_capnode/status/', { headers: admin })).status).toBe(200);
    expect((await netRequest(port, '/_capnode', { headers: admin })).status).toBe(200);
    adminCalls.length = 0;
    for (const path of ['/_capnode/status', '/_capnode', '/_capnode/', '/_capnode/status?x', '/_capnode?x']) {
      const response = await netRequest(port, path, { headers: mcp });
      expect(response.status, path).toBe(401);
    }
    expect(adminCalls).toEqual([]);
  });

  const spellings = [
    ['dot-dot segment', '/x/../_capnode/status'],
    ['dot-dot at the root', '/../_capnode/status'],
    ['dot segment', '/_capnode/./status'],
    ['leading dot segment', '/./_capnode/status'],
    ['trailing dot segment', '/_capnode/status/.'],
    ['trailing dot-dot', '/_capnode/status/x/..'],
    ['double slash', '//_capnode/status'],
    ['inner double slash', '/_capnode//status'],
    ['percent-encoded dots', '/%2e%2e/_capnode/status'],
    ['upper-case percent dots', '/x/%2E%2E/_capnode/status'],
    ['half-encoded dot-dot', '/x/.%2e/_capnode/status'],
    ['percent-encoded slash', '/_capnode%2fstatus'],
    ['upper-case encoded slash', '/_capnode%2Fstatus'],
    ['percent-encoded name', '/%5fcapnode/status'],
    ['fully encoded name', '/%5f%63%61%70%6e%6f%64%65/status'],
    ['encoded backslash', '/x%5c..%5c_capnode/status'],
    ['backslashes', '\\_capnode\\status'],
    ['backslash after slash', '/\\_capnode/status'],
    ['mixed backslash dot-dot', '/x\\..\\_capnode/status'],
    ['trailing dot on a segment', '/_capnode./status'],
    ['trailing dot on the last segment', '/_capnode/status.'],
    ['trailing dots', '/_capnode/status...'],
    ['fragment', '/x#/../_capnode/status'],
    ['absolute-form', 'http://127.0.0.1:PORT/_capnode/status'],
    ['absolute-form with dot-dot', 'http://127.0.0.1:PORT/x/../_capnode/status'],
    ['absolute-form, other host', 'http://localhost/_capnode/status'],
    ['scheme-relative', '//127.0.0.1:PORT/_capnode/status'],
    ['asterisk-form', '*'],
    ['no leading slash', '_capnode/status'],
    ['non-ASCII byte', '/_capnode/st\u00e4tus'],
  ] as const;

  it.each(spellings)('refuses a %s target with 400 before any gate, for GET and POST and either token', async (_name, spelled) => {
    const target = spelled.replace('PORT', String(port));
    adminCalls.length = 0;
    for (const method of ['GET', 'POST', 'OPTIONS'] as const) {
      for (const headers of [mcp, admin, {}]) {
        const body = method === 'POST' ? '{"jsonrpc":"2.0","id":1,"method":"ping"}' : undefined;
        const response = await netRequest(port, target, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body }),
        });
        expect(response.status, `${method} ${target}`).toBe(400);
        expect(response.body, `${method} ${target}`).not.toContain('admin');
        expect(response.body).not.toMatch(/capnode MCP server/);
        if (response.body !== '') expect(JSON.parse(response.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      }
    }
    expect(adminCalls).toEqual([]);
  });

  it('still serves MCP on ordinary paths and answers the probe (the MCP token never reaches admin)', async () => {
    const ping = await netRequest(port, '/', { method: 'POST', headers: { ...mcp, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":7,"method":"ping"}' });
    expect(ping.status).toBe(200);
    expect(JSON.parse(ping.body)).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect((await netRequest(port, '/?q=%2e%2e', { headers: mcp })).status).toBe(200);
    expect((await netRequest(port, '/mcp', { headers: mcp })).status).toBe(200);
    // Paths outside /_capnode are not admin whatever their case; they are the MCP surface (probe).
    const upper = await netRequest(port, '/_CAPNODE/status', { headers: mcp });
    expect(upper.status).toBe(200);
    expect(upper.body).toMatch(/capnode MCP server/);
  });
});
