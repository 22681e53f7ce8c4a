import { describe, expect, it } from 'vitest';
import { createChannelBridge } from './channelBridge.js';
import type { ChannelBridgeOptions, ChannelNotification } from './channelContract.js';
import { startFakeGateway, type FakeConnection } from '../internal/fakeGateway.js';
import { createEphemeralDeviceIdentity, createWsSocketFactory } from '../node.js';
import { eventually } from '../../../../tests/support/poll.js';

// The real gateway has no channels offline, so session.message traffic (and its volume) comes from a
// fake here; approvals and tools run against the real gateway in tests/gateway/channel.interop.ts.

/** A fake gateway that answers sessions.subscribe (unless told to hold it) and records connections. */
async function gatewayWithSubscribe(hold = false) {
  const subscribes: Array<{ connection: FakeConnection; id: string }> = [];
  const gateway = await startFakeGateway(async (connection) => {
    await connection.handshake();
    const request = await connection.next((frame) => frame.method === 'sessions.subscribe');
    subscribes.push({ connection, id: request.id });
    if (!hold) connection.respond(request.id, { subscribed: true });
  });
  return { gateway, subscribes };
}

function bridgeOptions(url: string, extra: Partial<ChannelBridgeOptions> = {}): ChannelBridgeOptions {
  return { url, token: 't', identity: createEphemeralDeviceIdentity(), createSocket: createWsSocketFactory(), backoff: { initialMs: 20, maxMs: 100 }, ...extra };
}

function message(connection: FakeConnection, sessionKey: string, text: string, extra: Record<string, unknown> = {}) {
  connection.send({
    type: 'event',
    event: 'session.message',
    payload: { sessionKey, lastChannel: 'telegram', lastTo: 'chat-1', message: { role: 'user', content: [{ type: 'text', text }] }, senderIsOwner: true, ...extra },
  });
}

describe('channel bridge', () => {
  it('is ready only after sessions.subscribe succeeded, and subscribes again after a reconnect', async () => {
    const { gateway, subscribes } = await gatewayWithSubscribe(true);
    await using _gateway = gateway;
    await using bridge = createChannelBridge(bridgeOptions(gateway.url));
    let ready = false;
    const waiting = bridge.waitUntilReady().then(() => (ready = true));
    await eventually(() => subscribes.length === 1);
    const connect = gateway.connections[0]!.received.find((frame) => frame.method === 'connect')!;
    expect(connect.params).toMatchObject({ role: 'operator', scopes: ['operator.read', 'operator.write', 'operator.approvals'], caps: ['approvals'], client: { id: 'cli', mode: 'cli' } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ready).toBe(false);
    subscribes[0]!.connection.respond(subscribes[0]!.id, { subscribed: true });
    await waiting;
    expect(bridge.isReady()).toBe(true);

    bridge.client.reconnect('test');
    await eventually(() => subscribes.length === 2);
    expect(bridge.isReady()).toBe(false);
    subscribes[1]!.connection.respond(subscribes[1]!.id, { subscribed: true });
    await bridge.waitUntilReady({ timeoutMs: 10_000 });
  });

  it('queues events with cursors from 1, keeps the newest 1000, polls without consuming, filters by session and reports gaps', async () => {
    const { gateway } = await gatewayWithSubscribe();
    await using _gateway = gateway;
    await using bridge = createChannelBridge(bridgeOptions(gateway.url));
    await bridge.waitUntilReady({ timeoutMs: 10_000 });
    const connection = gateway.connections[0]!;
    for (let i = 1; i <= 1005; i += 1) message(connection, i % 2 ? 'odd' : 'even', `m${i}`);
    await eventually(() => bridge.pollEvents({ afterCursor: 1004 }).events.length === 1);

    const first = bridge.pollEvents({ afterCursor: 0 }, 3);
    expect(first.gap).toEqual({ requested_after_cursor: 0, oldest_available_cursor: 6 });
    expect(first.events.map((event) => event.cursor)).toEqual([6, 7, 8]);
    expect(first.nextCursor).toBe(8);
    expect(bridge.pollEvents({ afterCursor: 0 }, 3).events.map((event) => event.cursor)).toEqual([6, 7, 8]);
    const odd = bridge.pollEvents({ afterCursor: 1000, sessionKey: 'odd' }, 200);
    expect(odd.events.map((event) => event.cursor)).toEqual([1001, 1003, 1005]);
    expect(odd.gap).toBeUndefined();
    expect(bridge.pollEvents({ afterCursor: 1005 })).toEqual({ events: [], nextCursor: 1005 });
    expect(bridge.pollEvents({ afterCursor: 0 }, 500).events).toHaveLength(200);
    const [event] = bridge.pollEvents({ afterCursor: 1004 }).events;
    expect(event).toMatchObject({ type: 'message', sessionKey: 'odd', text: 'm1005', role: 'user', conversation: { sessionKey: 'odd', channel: 'telegram', to: 'chat-1' } });
  });

  it('events_wait wakes on the next matching event, times out with null, and ends on abort', async () => {
    const { gateway } = await gatewayWithSubscribe();
    await using _gateway = gateway;
    await using bridge = createChannelBridge(bridgeOptions(gateway.url));
    await bridge.waitUntilReady({ timeoutMs: 10_000 });
    const connection = gateway.connections[0]!;
    const waiting = bridge.waitForEvent({ afterCursor: 0, sessionKey: 'wanted' }, 10_000);
    message(connection, 'other', 'not this one');
    message(connection, 'wanted', 'this one');
    expect((await waiting).event).toMatchObject({ cursor: 2, sessionKey: 'wanted', text: 'this one' });
    expect(await bridge.waitForEvent({ afterCursor: 2 }, 50)).toEqual({ event: null });
    const controller = new AbortController();
    const aborted = bridge.waitForEvent({ afterCursor: 2 }, 60_000, controller.signal);
    controller.abort();
    expect(await aborted).toEqual({ event: null });
  });

  it('tracks gateway approvals until resolved or expired', async () => {
    let now = 1_000_000;
    const { gateway } = await gatewayWithSubscribe();
    await using _gateway = gateway;
    await using bridge = createChannelBridge(bridgeOptions(gateway.url, { now: () => now }));
    await bridge.waitUntilReady({ timeoutMs: 10_000 });
    const connection = gateway.connections[0]!;
    connection.send({ type: 'event', event: 'exec.approval.requested', payload: { id: 'a1', request: { command: 'ls' }, createdAtMs: 1, expiresAtMs: now + 5_000 } });
    connection.send({ type: 'event', event: 'plugin.approval.requested', payload: { id: 'p1', createdAtMs: 2 } });
    connection.send({ type: 'event', event: 'exec.approval.requested', payload: { id: 'a2', createdAtMs: 3 } });
    await eventually(() => bridge.listPendingApprovals().length === 3);
    expect(bridge.listPendingApprovals().map((a) => `${a.kind}:${a.id}`)).toEqual(['exec:a1', 'plugin:p1', 'exec:a2']);
    connection.send({ type: 'event', event: 'exec.approval.resolved', payload: { id: 'a2', decision: 'deny' } });
    await eventually(() => bridge.listPendingApprovals().length === 2);
    now += 10_000;
    expect(bridge.listPendingApprovals().map((a) => a.id)).toEqual(['p1']);
    now += 30 * 60_000;
    expect(bridge.listPendingApprovals()).toEqual([]);
    expect(bridge.pollEvents({ afterCursor: 0 }).events.map((e) => e.type)).toEqual(['exec_approval_requested', 'plugin_approval_requested', 'exec_approval_requested', 'exec_approval_resolved']);
  });

  it('answers a pending Claude permission request from a "yes <code>" reply and logs failed notifications in one line', async () => {
    const notifications: ChannelNotification[] = [];
    const logs: string[] = [];
    let failNext = false;
    const { gateway } = await gatewayWithSubscribe();
    await using _gateway = gateway;
    await using bridge = createChannelBridge(
      bridgeOptions(gateway.url, {
        notify: (notification) => {
          if (failNext) {
            failNext = false;
            throw new Error('transport closed\nstack line');
          }
          notifications.push(notification);
        },
        onLog: (_level, line) => logs.push(line),
      }),
    );
    await bridge.waitUntilReady({ timeoutMs: 10_000 });
    const connection = gateway.connections[0]!;
    bridge.handleClaudePermissionRequest({ requestId: 'abcde', toolName: 'Bash', description: 'run ls', inputPreview: 'ls' });
    expect(bridge.pollEvents({ afterCursor: 0 }).events[0]).toMatchObject({ type: 'claude_permission_request', requestId: 'abcde', toolName: 'Bash' });

    message(connection, 'chat', 'hello there');
    await eventually(() => notifications.length === 1);
    expect(notifications[0]).toEqual({
      method: 'notifications/claude/channel',
      params: { content: 'hello there', meta: { session_key: 'chat', channel: 'telegram', to: 'chat-1', account_id: '', thread_id: '', message_id: '' } },
    });

    failNext = true;
    message(connection, 'chat', 'YES abcde');
    await eventually(() => logs.some((line) => line.includes('notifications/claude/channel/permission failed')));
    expect(logs.find((line) => line.includes('failed'))).toBe('notification notifications/claude/channel/permission failed: transport closed');
    message(connection, 'chat', 'yes abcde');
    await eventually(() => notifications.length === 2);
    expect(notifications[1]).toEqual({ method: 'notifications/claude/channel/permission', params: { request_id: 'abcde', behavior: 'allow' } });
    // Answered: a further reply is an ordinary message.
    message(connection, 'chat', 'no abcde');
    await eventually(() => notifications.length === 3);
    expect(notifications[2]!.method).toBe('notifications/claude/channel');
    // Replies from someone other than the owner never answer permissions.
    bridge.handleClaudePermissionRequest({ requestId: 'fghij', toolName: 'Bash', description: 'd', inputPreview: 'p' });
    message(connection, 'chat', 'yes fghij', { senderIsOwner: false });
    await eventually(() => notifications.length === 4);
    expect(notifications[3]!.method).toBe('notifications/claude/channel');
  });

  it('waitUntilReady ends with timeout, aborted, a refused subscription, or the client stopping for good', async () => {
    const held = await gatewayWithSubscribe(true);
    await using _held = held.gateway;
    await using bridge = createChannelBridge(bridgeOptions(held.gateway.url));
    await expect(bridge.waitUntilReady({ timeoutMs: 50 })).rejects.toMatchObject({ code: 'timeout' });
    const controller = new AbortController();
    const aborted = bridge.waitUntilReady({ signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'aborted' });
    // A subscription the gateway refuses for good ends the wait with its error.
    await eventually(() => held.subscribes.length === 1);
    const refusedWait = bridge.waitUntilReady();
    held.subscribes[0]!.connection.fail(held.subscribes[0]!.id, { code: 'FORBIDDEN', message: 'missing scope: operator.read' });
    await expect(refusedWait).rejects.toMatchObject({ code: 'request_failed', gatewayCode: 'FORBIDDEN' });

    await using refusing = await startFakeGateway(async (connection) => {
      connection.challenge();
      const connect = await connection.next((frame) => frame.method === 'connect');
      connection.fail(connect.id, { code: 'INVALID_REQUEST', message: 'protocol mismatch', details: { code: 'PROTOCOL_MISMATCH', expectedProtocol: 5 } });
    });
    await using stopped = createChannelBridge(bridgeOptions(refusing.url));
    await expect(stopped.waitUntilReady()).rejects.toMatchObject({ code: 'protocol_mismatch' });
  });

  it('close releases waiters', async () => {
    const { gateway } = await gatewayWithSubscribe();
    await using _gateway = gateway;
    const bridge = createChannelBridge(bridgeOptions(gateway.url));
    await bridge.waitUntilReady({ timeoutMs: 10_000 });
    const waiting = bridge.waitForEvent({ afterCursor: 0 }, 60_000);
    await bridge.close();
    expect(await waiting).toEqual({ event: null });
    await expect(bridge.waitUntilReady()).rejects.toMatchObject({ code: 'closed' });
  });
});
