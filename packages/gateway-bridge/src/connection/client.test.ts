import { GATEWAY_PRE_CONNECT_MAX_BYTES } from '@capnode/protocol/gateway';
import { describe, expect, it } from 'vitest';
import { createGatewayClient } from './client.js';
import type { GatewayClientOptions } from './clientContract.js';
import { isGatewayError } from '../errors.js';
import { createMemoryDeviceTokenStore } from './identity.js';
import { startFakeGateway } from '../internal/fakeGateway.js';
import { createEphemeralDeviceIdentity, createWsSocketFactory } from '../node.js';
import { eventually } from '../../../../tests/support/poll.js';

// Faults the real gateway cannot be made to produce. Interop is tested against the real one in tests/gateway.

function clientOptions(url: string, extra: Partial<GatewayClientOptions> = {}): GatewayClientOptions {
  return {
    url,
    token: 'fake-token',
    role: 'node',
    client: { id: 'node-host', mode: 'node', version: '0.0.0-test', platform: 'linux', deviceFamily: 'Linux' },
    declaration: () => ({ caps: ['device'], commands: ['device.info'] }),
    identity: createEphemeralDeviceIdentity(),
    createSocket: createWsSocketFactory(),
    backoff: { initialMs: 20, maxMs: 200 },
    ...extra,
  };
}

describe('gateway client against a faulty gateway', () => {
  it('drops malformed, binary and oversized frames before and after the handshake, and keeps working', async () => {
    await using gateway = await startFakeGateway(async (connection) => {
      connection.sendRaw('not json');
      connection.sendRaw('[1,2,3]');
      connection.sendRaw(JSON.stringify({ type: 'event' }));
      connection.sendRaw(JSON.stringify({ type: 'res', id: 'x', ok: false }));
      connection.sendRaw(JSON.stringify({ type: 'bogus', id: 1 }));
      connection.sendRaw(Buffer.from([1, 2, 3]));
      connection.sendRaw(JSON.stringify({ type: 'event', event: 'connect.challenge', payload: { nonce: 'n' } }));
      connection.sendRaw(JSON.stringify({ type: 'event', event: 'noise', payload: 'x'.repeat(GATEWAY_PRE_CONNECT_MAX_BYTES) }));
      await connection.handshake({ policy: { maxPayload: 4096 } });
      connection.sendRaw('{"type":"res","id":');
      connection.sendRaw(JSON.stringify({ type: 'event', event: 'too.big', payload: 'y'.repeat(5000) }));
      connection.send({ type: 'event', event: 'hello.after', payload: { fine: true } });
    });
    const events: string[] = [];
    await using client = createGatewayClient(clientOptions(gateway.url, { onEvent: (event) => events.push(event.event) }));
    await client.ready({ timeoutMs: 10_000 });
    await eventually(() => events.includes('hello.after'));
    expect(events).not.toContain('too.big');
    expect(events).not.toContain('noise');
    expect(client.status()).toMatchObject({ state: 'connected', rejectedFrames: 10 });
    expect(gateway.connections).toHaveLength(1);
  });

  it('signs the challenge with the v3 payload and presents a kept device token', async () => {
    const deviceTokens = createMemoryDeviceTokenStore();
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ deviceToken: 'device-token-1' }));
    await using client = createGatewayClient(clientOptions(gateway.url, { deviceTokens }));
    await client.ready({ timeoutMs: 10_000 });
    const first = gateway.connections[0]!.received.find((frame) => frame.method === 'connect')!;
    expect(first.params.auth).toEqual({ token: 'fake-token' });
    expect(first.params.device).toMatchObject({ nonce: 'nonce-0', signedAt: expect.any(Number) });
    expect(deviceTokens.load(gateway.url, 'node')).toBe('device-token-1');

    client.reconnect('test');
    await eventually(() => client.status().server?.connId === 'conn-1');
    const second = gateway.connections[1]!.received.find((frame) => frame.method === 'connect')!;
    expect(second.params.auth).toEqual({ token: 'fake-token', deviceToken: 'device-token-1' });
    expect(second.params.commands).toEqual(['device.info']);
  });

  it('a half-open connection (no ticks, no close) is declared dead after 2 × tickIntervalMs and replaced', async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ policy: { tickIntervalMs: 150 } }));
    const logs: string[] = [];
    await using client = createGatewayClient(clientOptions(gateway.url, { onLog: (_level, message) => logs.push(message) }));
    await client.ready({ timeoutMs: 10_000 });
    await gateway.connection(1);
    await eventually(() => client.status().server?.connId === 'conn-1');
    expect(logs.some((line) => line.includes('no tick'))).toBe(true);
    const dropped = await gateway.connections[0]!.closed;
    expect(dropped.code).toBe(1006);
  });

  it('ticks keep the connection alive; losing them later gets it replaced', async () => {
    let ticking = true;
    await using gateway = await startFakeGateway(async (connection) => {
      await connection.handshake({ policy: { tickIntervalMs: 400 } });
      if (gateway.connections.indexOf(connection) > 0) return;
      const timer = setInterval(() => {
        if (ticking) connection.send({ type: 'event', event: 'tick', payload: { ts: Date.now() } });
      }, 50);
      void connection.closed.then(() => clearInterval(timer));
    });
    await using client = createGatewayClient(clientOptions(gateway.url));
    await client.ready({ timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(gateway.connections).toHaveLength(1);
    ticking = false;
    await gateway.connection(1);
  });

  it('a retryable refusal waits retryAfterMs before the next attempt', async () => {
    const attempts: number[] = [];
    await using gateway = await startFakeGateway(async (connection) => {
      attempts.push(Date.now());
      if (attempts.length === 1) {
        connection.challenge();
        const connect = await connection.next((frame) => frame.method === 'connect');
        connection.fail(connect.id, { code: 'UNAVAILABLE', message: 'gateway starting', retryable: true, retryAfterMs: 1_200 });
        return;
      }
      await connection.handshake();
    });
    await using client = createGatewayClient(clientOptions(gateway.url));
    await client.ready({ timeoutMs: 15_000 });
    expect(attempts).toHaveLength(2);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(1_100);
  });

  it('a refused connect that is not retryable stops the client', async () => {
    await using gateway = await startFakeGateway(async (connection) => {
      connection.challenge();
      const connect = await connection.next((frame) => frame.method === 'connect');
      connection.fail(connect.id, { code: 'INVALID_REQUEST', message: 'protocol mismatch', details: { code: 'PROTOCOL_MISMATCH', expectedProtocol: 5 } });
    });
    await using client = createGatewayClient(clientOptions(gateway.url));
    const error = await client.ready({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(isGatewayError(error) && error.code).toBe('protocol_mismatch');
    expect((error as Error).message).toContain('protocol 5');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gateway.connections).toHaveLength(1);
    expect(client.status().state).toBe('failed');
  });

  it('keeps frames within policy.maxPayload and the connect frame within 64 KiB', async () => {
    await using gateway = await startFakeGateway((connection) => void connection.handshake({ policy: { maxPayload: 1024 } }));
    await using client = createGatewayClient(clientOptions(gateway.url));
    await client.ready({ timeoutMs: 10_000 });
    const error = await client.request('echo', { data: 'z'.repeat(2048) }).catch((e: unknown) => e);
    expect(isGatewayError(error) && error.code).toBe('payload_too_large');
    expect(client.status().state).toBe('connected');
    expect(gateway.connections[0]!.received.some((frame) => frame.method === 'echo')).toBe(false);

    const commands = Array.from({ length: 4000 }, (_, i) => `very.long.command.name.number.${i}`);
    await using big = createGatewayClient(clientOptions(gateway.url, { declaration: () => ({ caps: [], commands }) }));
    const refused = await big.ready({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(isGatewayError(refused) && refused.code).toBe('connect_rejected');
    expect((refused as Error).message).toContain('declare fewer commands');
  });

  it('drops a gateway that never sends the challenge after the handshake timeout, then retries', async () => {
    await using gateway = await startFakeGateway(async (connection) => {
      if (gateway.connections.indexOf(connection) === 0) return;
      await connection.handshake();
    });
    await using client = createGatewayClient(clientOptions(gateway.url, { handshakeTimeoutMs: 300 }));
    await client.ready({ timeoutMs: 10_000 });
    expect(gateway.connections.length).toBeGreaterThanOrEqual(2);
  });

  it('correlates responses, times requests out, and fails pending requests when the connection drops', async () => {
    await using gateway = await startFakeGateway(async (connection) => {
      await connection.handshake();
      for (;;) {
        const request = await connection.next((frame) => frame.type === 'req' && frame.method !== 'connect', 60_000).catch(() => undefined);
        if (!request) return;
        if (request.method === 'echo') connection.respond(request.id, { echo: request.params });
        if (request.method === 'refuse') connection.fail(request.id, { code: 'FORBIDDEN', message: 'missing scope: operator.read', details: { code: 'MISSING_SCOPE' } });
        if (request.method === 'drop') connection.socket.terminate();
      }
    });
    await using client = createGatewayClient(clientOptions(gateway.url));
    const [a, b] = await Promise.all([client.request('echo', { n: 1 }), client.request('echo', { n: 2 })]);
    expect(a).toEqual({ echo: { n: 1 } });
    expect(b).toEqual({ echo: { n: 2 } });
    const refused = await client.request('refuse', {}).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'request_failed', gatewayCode: 'FORBIDDEN', detailCode: 'MISSING_SCOPE' });
    const silent = await client.request('ignored', {}, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(silent).toMatchObject({ code: 'timeout' });
    const lost = await client.request('drop', {}).catch((e: unknown) => e);
    expect(lost).toMatchObject({ code: 'connection_lost', retryable: true });
    await client.ready({ timeoutMs: 10_000 });
    expect(await client.request('echo', { n: 3 })).toEqual({ echo: { n: 3 } });
    // A timeout past the largest timer delay is capped, not fired at once.
    expect(await client.request('echo', { n: 4 }, { timeoutMs: 1e12 })).toEqual({ echo: { n: 4 } });
  });

  it('a caller\'s signal ends request() and ready() with aborted, its reason as the cause', async () => {
    let challenge!: () => void;
    const challenged = new Promise<void>((resolve) => {
      challenge = resolve;
    });
    await using gateway = await startFakeGateway(async (connection) => {
      await challenged;
      await connection.handshake();
    });
    await using client = createGatewayClient(clientOptions(gateway.url));
    const reason = new Error('caller gave up');
    const controller = new AbortController();
    const waiting = client.ready({ signal: controller.signal });
    controller.abort(reason);
    await expect(waiting).rejects.toMatchObject({ code: 'aborted', cause: reason });
    challenge();
    await client.ready({ timeoutMs: 10_000 });
    await expect(client.request('ignored', {}, { signal: AbortSignal.abort(reason) })).rejects.toMatchObject({ code: 'aborted', cause: reason });
    const inFlight = new AbortController();
    const pending = client.request('ignored', {}, { signal: inFlight.signal, timeoutMs: 60_000 });
    await eventually(() => gateway.connections[0]!.received.some((frame) => frame.method === 'ignored'));
    inFlight.abort(reason);
    await expect(pending).rejects.toMatchObject({ code: 'aborted', cause: reason });
  });

  it('close() stops reconnecting, rejects waiters and is idempotent', async () => {
    await using gateway = await startFakeGateway(() => {
      // Never challenges.
    });
    const client = createGatewayClient(clientOptions(gateway.url));
    const waiting = client.ready();
    // Capped at the largest timer delay: still waiting when close() ends it.
    const waitingLong = client.ready({ timeoutMs: 1e12 });
    await gateway.connection(0);
    await Promise.all([client.close(), client.close()]);
    await expect(waiting).rejects.toMatchObject({ code: 'closed' });
    await expect(waitingLong).rejects.toMatchObject({ code: 'closed' });
    await expect(client.request('x')).rejects.toMatchObject({ code: 'closed' });
    expect(client.status().state).toBe('closed');
  });

  it('close() against a gateway that never answers the close ends the socket after the grace', async () => {
    await using gateway = await startFakeGateway(async (c) => {
      await c.handshake();
    });
    const client = createGatewayClient(clientOptions(gateway.url));
    await client.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    // The gateway stops reading: the close frame is never answered (without the grace, close() would hang).
    const raw = (connection.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    raw.pause();
    await client.close();
    expect(client.status().state).toBe('closed');
    raw.resume();
    await connection.closed;
  });

  it('rejects URLs that are not ws:// or wss://', () => {
    expect(() => createGatewayClient(clientOptions('http://127.0.0.1:1'))).toThrow(/ws: or wss:/);
    expect(() => createGatewayClient(clientOptions('ws://user:pw@127.0.0.1:1'))).toThrow(/not in the URL/);
  });

  it('a 1012 service restart close of an open connection reconnects at the restart interval, not the backoff', async () => {
    await using gateway = await startFakeGateway();
    // Backoff that would wait a minute: the restart interval (500 ms) must win.
    await using client = createGatewayClient(clientOptions(gateway.url, { backoff: { initialMs: 60_000, maxMs: 60_000 } }));
    await client.ready({ timeoutMs: 10_000 });
    (await gateway.connection(0)).socket.close(1012, 'service restart');
    await eventually(() => client.status().state === 'waiting');
    expect(client.status().nextRetryAt! - Date.now()).toBeLessThanOrEqual(500);
    await gateway.connection(1, 10_000);
    await eventually(() => client.status().state === 'connected');
  });
});
