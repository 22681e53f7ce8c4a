import { describe, expect, it } from 'vitest';
import { startTestHost } from '../support/testHost.js';
import { signIn } from './apiClient.js';

describe('dashboard gateway', () => {
  it('stores the gateway URL and token (never shown), says restart needed, and pairing needs a node identity', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const initial = (await (await client.api('/api/gateway')).json()) as { node: { state: string; enabled: boolean }; configured: { enabled: boolean; hasToken: boolean } };
    expect(initial.node).toMatchObject({ enabled: false, state: 'disabled' });
    expect(initial.configured).toEqual({ enabled: false, hasToken: false });
    expect((await client.api('/api/gateway/pair', { method: 'POST' })).status).toBe(400);

    const bad = await client.api('/api/gateway', { method: 'PUT', body: { url: 'http://127.0.0.1:18789' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { fields: { path: string }[] } }).error.fields.map((field) => field.path)).toEqual(['url']);
    const put = await client.api('/api/gateway', { method: 'PUT', body: { url: 'ws://127.0.0.1:18789', token: 'gw-secret-token' } });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { restartNeeded: string[] }).restartNeeded.sort()).toEqual(['node.enabled', 'node.token', 'node.url']);
    const after = await (await client.api('/api/gateway')).text();
    expect(after).not.toContain('gw-secret-token');
    expect(JSON.parse(after)).toMatchObject({ configured: { enabled: true, url: 'ws://127.0.0.1:18789', hasToken: true }, restartNeeded: expect.arrayContaining(['node.url']) });
    expect(test.host.settings.reload().node).toEqual({ enabled: true, url: 'ws://127.0.0.1:18789', token: 'gw-secret-token' });
    const pair = await client.api('/api/gateway/pair', { method: 'POST' });
    expect(pair.status).toBe(409);
    expect(((await pair.json()) as { error: { message: string } }).error.message).toMatch(/no gateway node identity/);
  });
});
