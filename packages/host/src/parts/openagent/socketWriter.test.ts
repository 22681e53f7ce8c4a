import { describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { createSocketWriter, SEND_HIGH_WATER_BYTES } from './socketWriter.js';

async function pair() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => server.once('connection', (socket) => resolve(socket)));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  await new Promise<void>((resolve) => client.once('open', () => resolve()));
  const peer = await accepted;
  return {
    client,
    peer,
    async [Symbol.asyncDispose]() {
      client.terminate();
      peer.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('socket writer', () => {
  it('writes in order and waits for each write', async () => {
    await using sockets = await pair();
    const received: string[] = [];
    sockets.peer.on('message', (data) => received.push(String(data)));
    const writer = createSocketWriter(sockets.client);
    await Promise.all(['a', 'b', 'c'].map((text) => writer.send(() => text)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual(['a', 'b', 'c']);
  });

  it('pauses over 1 MiB buffered and counts a stalled buffer as a lost transport', async () => {
    await using sockets = await pair();
    (sockets.peer as unknown as { _socket: { pause(): void } })._socket.pause();
    const writer = createSocketWriter(sockets.client, 300);
    const big = 'x'.repeat(4 * 1024 * 1024);
    const sends: Promise<void>[] = [];
    for (let index = 0; index < 6; index += 1) sends.push(writer.send(() => big));
    const outcomes = await Promise.allSettled(sends);
    expect(sockets.client.bufferedAmount).toBeGreaterThan(SEND_HIGH_WATER_BYTES);
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome as PromiseRejectedResult).reason as { code?: string });
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((failure) => failure.code === 'capability_transport_lost')).toBe(true);
  });

  it('fails sends after stop', async () => {
    await using sockets = await pair();
    const writer = createSocketWriter(sockets.client);
    writer.stop();
    await expect(writer.send(() => 'x')).rejects.toMatchObject({ code: 'capability_transport_lost' });
  });
});
