// Gaps left by tests/mcp-server/httpTargets.test.ts: HEAD, `;` path parameters, trailing double
// slashes, case variants of the admin root, and the admin SSE stream, with the MCP token.
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, TOKEN, netRequest, useAdminFixtureServer } from '../mcp-server/helpers.js';

describe('admin routes: more spellings with the MCP token', () => {
  const suite = useAdminFixtureServer();
  const { adminCalls } = suite;
  const mcp = { authorization: `Bearer ${TOKEN}` };
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  it('HEAD, `;` parameters, trailing slashes and the event stream never reach admin with the MCP token', async () => {
    const port = suite.server.port;
    adminCalls.length = 0;
    for (const target of ['/_capnode/status', '/_capnode/approvals/events', '/_capnode/status;x=1', '/_capnode;x/status', '/_capnode/status//', '/_capnode/approvals/events/', '/_capnode/;/status']) {
      for (const method of ['HEAD', 'GET', 'POST', 'PUT', 'DELETE']) {
        const response = await netRequest(port, target, { method, headers: { ...mcp, accept: 'text/event-stream' } });
        expect(response.body, `${method} ${target}`).not.toContain('admin');
      }
    }
    expect(adminCalls).toEqual([]);
  });

  it('the admin token does not open the MCP surface', async () => {
    const port = suite.server.port;
    const ping = await netRequest(port, '/', { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":7,"method":"ping"}' });
    expect(ping.status).toBe(401);
    for (const target of ['/_CAPNODE/status', '/_Capnode/status', '/mcp']) {
      const response = await netRequest(port, target, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":7,"method":"ping"}' });
      expect(response.status, target).toBe(401);
    }
  });
});
