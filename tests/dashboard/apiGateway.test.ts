import { describe, expect, it } from 'vitest';
import { startTestHost } from '../support/testHost.js';
import { signIn } from './apiClient.js';
import { freePort } from '../support/net.js';

describe('dashboard gateway', () => {
  it('connects the gateway node live with the stored URL and token (never shown), and turns it off; pairing needs a node identity', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const initial = (await (await client.api('/api/gateway')).json()) as { node: { state: string; enabled: boolean }; configured: { enabled: boolean; hasToken: boolean } };
    expect(initial.node).toMatchObject({ enabled: false, state: 'disabled' });
    expect(initial.configured).toEqual({ enabled: false, hasToken: false });
    expect((await client.api('/api/gateway/pair', { method: 'POST' })).status).toBe(400);

    const bad = await client.api('/api/gateway', { method: 'PUT', body: { url: 'http://127.0.0.1:18789' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { fields: { path: string }[] } }).error.fields.map((field) => field.path)).toEqual(['url']);
    await client.api('/api/settings', { method: 'PATCH', body: { gateway: { url: 'ws://127.0.0.1:9' } } });
    const pair = await client.api('/api/gateway/pair', { method: 'POST' });
    expect(pair.status).toBe(409);
    expect(((await pair.json()) as { error: { message: string } }).error.message).toMatch(/no gateway node identity/);
    // Nothing listens there: the node keeps trying, which is all this test needs to see it is live.
    const gatewayUrl = `ws://127.0.0.1:${await freePort()}`;
    const put = await client.api('/api/gateway', { method: 'PUT', body: { url: gatewayUrl, token: 'gw-secret-token' } });
    expect(put.status).toBe(200);
    const applied = (await put.json()) as { applied: string[]; restartNeeded: string[] };
    expect(applied.applied.sort()).toEqual(['gateway.enabled', 'gateway.token', 'gateway.url']);
    expect(applied.restartNeeded).toEqual([]);
    const after = await (await client.api('/api/gateway')).text();
    expect(after).not.toContain('gw-secret-token');
    expect(JSON.parse(after)).toMatchObject({ node: { enabled: true, url: gatewayUrl }, configured: { enabled: true, url: gatewayUrl, hasToken: true } });
    expect(['connecting', 'waiting']).toContain(test.host.status().node.state);
    expect(test.host.settings.reload().gateway).toEqual({ enabled: true, url: gatewayUrl, token: 'gw-secret-token' });
    const off = await client.api('/api/settings', { method: 'PATCH', body: { gateway: { enabled: false } } });
    expect(((await off.json()) as { applied: string[] }).applied).toEqual(['gateway.enabled']);
    expect(test.host.status().node).toMatchObject({ enabled: false, state: 'disabled' });
  });

  it('a saved gateway token never follows a new gateway URL by itself: typed again, or null to drop it', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const first = `ws://127.0.0.1:${await freePort()}`;
    expect((await client.api('/api/gateway', { method: 'PUT', body: { url: first, token: 'gw-secret-token', enabled: false } })).status).toBe(200);
    const attacker = 'wss://gateway.attacker.example';
    for (const [route, method, body] of [
      ['/api/gateway', 'PUT', { url: attacker, enabled: false }],
      ['/api/settings', 'PATCH', { gateway: { url: attacker } }],
      ['/api/settings', 'PATCH', { gateway: { url: attacker, token: '••••••••' } }],
    ] as const) {
      const refused = await client.api(route, { method, body });
      expect(refused.status).toBe(400);
      const error = ((await refused.json()) as { error: { fields: { path: string; message: string }[] } }).error;
      expect(error.fields.map((field) => field.path)).toEqual([route === '/api/gateway' ? 'token' : 'gateway.token']);
      expect(error.fields[0]!.message).toContain(first);
      expect(test.host.settings.reload().gateway).toEqual({ enabled: false, url: first, token: 'gw-secret-token' });
    }
    // Same URL keeps the token; a new URL with its own token, or with null, is fine.
    expect((await client.api('/api/gateway', { method: 'PUT', body: { url: first, enabled: false } })).status).toBe(200);
    expect(test.host.settings.reload().gateway.token).toBe('gw-secret-token');
    const second = `ws://127.0.0.1:${await freePort()}`;
    expect((await client.api('/api/gateway', { method: 'PUT', body: { url: second, token: 'other-token', enabled: false } })).status).toBe(200);
    expect((await client.api('/api/gateway', { method: 'PUT', body: { url: first, token: null, enabled: false } })).status).toBe(200);
    expect(test.host.settings.reload().gateway).toEqual({ enabled: false, url: first });
  });
});
