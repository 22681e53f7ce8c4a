import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import type { HelloOk } from '@capnode/protocol/gateway';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../tests/support/poll.js';
import type { GatewayClient } from '../connection/clientContract.js';
import { startFakeGateway, type FakeConnection } from '../internal/fakeGateway.js';
import { createEphemeralDeviceIdentity, createWsSocketFactory } from '../node.js';
import { createGatewayNodeTransport } from './gatewayNodeTransport.js';
import { PLUGIN_SURFACE_DEFAULT_TTL_MS, PLUGIN_SURFACE_REFRESH_MARGIN_MS, createPluginSurfaces } from './pluginSurfaces.js';

const CAP = 'http://127.0.0.1:18789/__openclaw__/cap/';

function testNode(url: string, categories: readonly string[] = []) {
  const registry = createRegistry(categories.map((category) => defineCapability({ category, commands: [defineCommand({ name: `${category}.present`, description: 'x', execute: () => 'ok' })] })));
  const invoker = createInvoker({ registry });
  return createGatewayNodeTransport({ url, token: 't', invoker, identity: createEphemeralDeviceIdentity(), createSocket: createWsSocketFactory(), client: { version: '0', platform: 'linux' } });
}

/** Answers the next `node.pluginSurface.refresh` with OpenClaw's documented shape and returns its params. */
async function answerRefresh(connection: FakeConnection, token: string, expiresAtMs?: number): Promise<Record<string, unknown>> {
  const request = await connection.next((frame) => frame.type === 'req' && frame.method === 'node.pluginSurface.refresh');
  connection.respond(request.id, { surface: 'canvas', pluginSurfaceUrls: { canvas: `${CAP}${token}` }, ...(expiresAtMs ? { expiresAtMs } : {}) });
  return request.params;
}

describe('plugin surface URLs of a gateway node', () => {
  it("keeps the hello's pluginSurfaceUrls and refreshes them with node.pluginSurface.refresh { surface, observedUrl }", async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ pluginSurfaceUrls: { canvas: `${CAP}first` } }));
    await using node = testNode(gateway.url);
    await node.ready({ timeoutMs: 10_000 });
    expect(node.pluginSurfaceUrl('canvas')).toBe(`${CAP}first`);
    expect(node.pluginSurfaceUrl('other')).toBeUndefined();
    // Fresh for ten minutes: no request.
    expect(await node.freshPluginSurfaceUrl('canvas')).toBe(`${CAP}first`);
    const connection = await gateway.connection(0);
    const refreshed = node.freshPluginSurfaceUrl('canvas', { force: true });
    const again = node.freshPluginSurfaceUrl('canvas', { force: true });
    expect(await answerRefresh(connection, 'second', Date.now() + 600_000)).toEqual({ surface: 'canvas', observedUrl: `${CAP}first` });
    expect(await refreshed).toBe(`${CAP}second`);
    expect(await again).toBe(`${CAP}second`);
    // One request for both callers.
    expect(connection.received.filter((frame) => frame.method === 'node.pluginSurface.refresh')).toHaveLength(1);
    expect(node.pluginSurfaceUrl('canvas')).toBe(`${CAP}second`);
  });

  it('keeps the current URL when the gateway refuses the refresh or answers without a URL', async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ pluginSurfaceUrls: { canvas: `${CAP}kept` } }));
    await using node = testNode(gateway.url);
    await node.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    const refused = node.freshPluginSurfaceUrl('canvas', { force: true });
    const request = await connection.next((frame) => frame.method === 'node.pluginSurface.refresh');
    connection.fail(request.id, { code: 'UNAVAILABLE', message: 'canvas plugin surface unavailable' });
    expect(await refused).toBe(`${CAP}kept`);
    const empty = node.freshPluginSurfaceUrl('canvas', { force: true });
    const second = await connection.next((frame) => frame.method === 'node.pluginSurface.refresh');
    connection.respond(second.id, { surface: 'canvas', pluginSurfaceUrls: {} });
    expect(await empty).toBe(`${CAP}kept`);
    expect(node.pluginSurfaceUrl('canvas')).toBe(`${CAP}kept`);
  });

  it('asks nothing for a surface the gateway did not issue, and a reconnect replaces the URLs', async () => {
    let count = 0;
    await using gateway = await startFakeGateway((connection) => void connection.handshake(count++ === 0 ? {} : { pluginSurfaceUrls: { canvas: `${CAP}after` } }));
    await using node = testNode(gateway.url);
    await node.ready({ timeoutMs: 10_000 });
    expect(await node.freshPluginSurfaceUrl('canvas', { force: true })).toBeUndefined();
    expect((await gateway.connection(0)).received.some((frame) => frame.method === 'node.pluginSurface.refresh')).toBe(false);
    node.client.reconnect('test');
    await eventually(() => node.pluginSurfaceUrl('canvas'), { what: 'the new connection', timeoutMs: 10_000 });
    expect(node.pluginSurfaceUrl('canvas')).toBe(`${CAP}after`);
  });

  it('refreshes a URL near its expiry before handing it out (counted from the hello, then from expiresAtMs)', async () => {
    let clock = 1_000_000;
    const requests: unknown[] = [];
    const hello = { type: 'hello-ok', protocol: 4, server: { version: 'x', connId: 'c1' }, auth: { role: 'node', scopes: [] }, policy: { maxPayload: 1, tickIntervalMs: 1 }, pluginSurfaceUrls: { canvas: `${CAP}a` } } as HelloOk;
    const client = {
      hello: () => hello,
      request: async (_method: string, params: unknown) => {
        requests.push(params);
        return { surface: 'canvas', pluginSurfaceUrls: { canvas: `${CAP}b` }, expiresAtMs: Date.now() + 120_000 };
      },
    } as unknown as GatewayClient;
    const surfaces = createPluginSurfaces({ client: () => client, log: () => undefined, now: () => clock });
    surfaces.connected(hello);
    clock += PLUGIN_SURFACE_DEFAULT_TTL_MS - PLUGIN_SURFACE_REFRESH_MARGIN_MS - 1;
    expect(await surfaces.fresh('canvas')).toBe(`${CAP}a`);
    clock += 2;
    expect(await surfaces.fresh('canvas')).toBe(`${CAP}b`);
    expect(requests).toEqual([{ surface: 'canvas', observedUrl: `${CAP}a` }]);
    // The gateway said two minutes: refreshed again once within a minute of that.
    clock += 59_000;
    expect(await surfaces.fresh('canvas')).toBe(`${CAP}b`);
    expect(requests).toHaveLength(1);
    clock += 2_000;
    await surfaces.fresh('canvas');
    expect(requests).toHaveLength(2);
    // An expiry beyond the default lifetime (another clock) counts as the default.
    let later = 0;
    (client as { request: unknown }).request = async () => {
      later += 1;
      return { surface: 'canvas', pluginSurfaceUrls: { canvas: `${CAP}c` }, expiresAtMs: Date.now() + 3_600_000 };
    };
    expect(await surfaces.fresh('canvas', { force: true })).toBe(`${CAP}c`);
    clock += PLUGIN_SURFACE_DEFAULT_TTL_MS - PLUGIN_SURFACE_REFRESH_MARGIN_MS - 1;
    await surfaces.fresh('canvas');
    expect(later).toBe(1);
    clock += 2;
    await surfaces.fresh('canvas');
    expect(later).toBe(2);
    expect(requests).toHaveLength(2);
  });

  it('after a failed refresh near expiry, calls use the current URL for a while instead of asking on every call', async () => {
    let clock = 1_000_000;
    let asked = 0;
    const hello = { type: 'hello-ok', protocol: 4, server: { version: 'x', connId: 'c1' }, auth: { role: 'node', scopes: [] }, policy: { maxPayload: 1, tickIntervalMs: 1 }, pluginSurfaceUrls: { canvas: `${CAP}a` } } as HelloOk;
    const client = {
      hello: () => hello,
      request: async () => {
        asked += 1;
        throw new Error('unknown method');
      },
    } as unknown as GatewayClient;
    const surfaces = createPluginSurfaces({ client: () => client, log: () => undefined, now: () => clock });
    surfaces.connected(hello);
    clock += PLUGIN_SURFACE_DEFAULT_TTL_MS - PLUGIN_SURFACE_REFRESH_MARGIN_MS + 1;
    for (let i = 0; i < 5; i++) expect(await surfaces.fresh('canvas')).toBe(`${CAP}a`);
    expect(asked).toBe(1);
    clock += 15_001;
    await surfaces.fresh('canvas');
    expect(asked).toBe(2);
    // A forced refresh (the page answered 401) still asks at once.
    await surfaces.fresh('canvas', { force: true });
    expect(asked).toBe(3);
  });

  it('a caller that aborts stops waiting; the refresh goes on for the others', async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ pluginSurfaceUrls: { canvas: `${CAP}x` } }));
    await using node = testNode(gateway.url);
    await node.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    const controller = new AbortController();
    const aborted = node.freshPluginSurfaceUrl('canvas', { force: true, signal: controller.signal });
    const waiting = node.freshPluginSurfaceUrl('canvas', { force: true });
    controller.abort(new Error('caller gone'));
    await expect(aborted).rejects.toThrow('caller gone');
    await answerRefresh(connection, 'y');
    expect(await waiting).toBe(`${CAP}y`);
  });

  it('reconnects once after an approval during the connection, so the gateway issues the canvas URL in the next hello', async () => {
    let count = 0;
    await using gateway = await startFakeGateway((connection) => void connection.handshake(count++ === 0 ? {} : { pluginSurfaceUrls: { canvas: `${CAP}approved` } }));
    await using node = testNode(gateway.url, ['canvas']);
    await node.ready({ timeoutMs: 10_000 });
    const first = await gateway.connection(0);
    expect(first.received.find((frame) => frame.method === 'connect')?.params.caps).toEqual(['canvas']);
    // Another node's approval changes nothing.
    first.send({ type: 'event', event: 'node.pair.resolved', payload: { requestId: 'r0', nodeId: 'someone-else', decision: 'approved' } });
    first.send({ type: 'event', event: 'node.pair.resolved', payload: { requestId: 'r1', nodeId: node.nodeId, decision: 'approved' } });
    first.send({ type: 'event', event: 'node.pair.resolved', payload: { requestId: 'r1', nodeId: node.nodeId, decision: 'approved' } });
    await eventually(() => node.pluginSurfaceUrl('canvas'), { what: 'the canvas URL after the reconnect', timeoutMs: 10_000 });
    expect(node.pluginSurfaceUrl('canvas')).toBe(`${CAP}approved`);
    expect(gateway.connections).toHaveLength(2);
    // With the URL in hand, a later approval does not reconnect.
    (await gateway.connection(1)).send({ type: 'event', event: 'node.pair.resolved', payload: { requestId: 'r2', nodeId: node.nodeId, decision: 'approved' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gateway.connections).toHaveLength(2);
  });

  it("another node's approval never reconnects, even while this approved node still has no canvas URL", async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake());
    await using node = testNode(gateway.url, ['canvas']);
    await node.ready({ timeoutMs: 10_000 });
    (await gateway.connection(0)).send({ type: 'event', event: 'node.pair.resolved', payload: { requestId: 'r1', nodeId: node.nodeId, decision: 'approved' } });
    const second = await gateway.connection(1);
    await eventually(() => (node.status().connection.state === 'connected' ? true : undefined), { what: 'the reconnect', timeoutMs: 10_000 });
    // This gateway never issues canvas; approvals of other nodes must not make this one reconnect again.
    for (const requestId of ['x1', 'x2']) second.send({ type: 'event', event: 'node.pair.resolved', payload: { requestId, nodeId: 'someone-else', decision: 'approved' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gateway.connections).toHaveLength(2);
  });

  it('does not reconnect after an approval when the node declares no hosted surface cap', async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake());
    await using node = testNode(gateway.url, ['demo']);
    await node.ready({ timeoutMs: 10_000 });
    (await gateway.connection(0)).send({ type: 'event', event: 'node.pair.resolved', payload: { requestId: 'r1', nodeId: node.nodeId, decision: 'approved' } });
    await eventually(() => (node.status().pairing.state === 'approved' ? true : undefined), { what: 'the approval', timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gateway.connections).toHaveLength(1);
  });
});
