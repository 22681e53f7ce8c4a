import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { AbortLatch } from '@capnode/toolkit/http';
import { LegacySseTransport } from './legacySse.js';

async function readText(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value } = await reader.read();
  return new TextDecoder().decode(value);
}

describe('LegacySseTransport', () => {
  it('opens with the endpoint event and frames every message as a message event', async () => {
    const transport = new LegacySseTransport('abc', '/message?sessionId=abc', 0);
    const reader = transport.stream.getReader();
    expect(await readText(reader)).toBe('event: endpoint\ndata: /message?sessionId=abc\n\n');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    expect(await readText(reader)).toBe('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');
    await transport.close();
  });

  it('holds a request until its response is sent, and knows its lifetime meanwhile', async () => {
    const transport = new LegacySseTransport('abc', '/m', 0);
    const seen: JSONRPCMessage[] = [];
    transport.onmessage = (message) => seen.push(message);
    const lifetime = new AbortLatch();
    let settled = false;
    const held = transport.deliver({ jsonrpc: '2.0', id: 7, method: 'ping' }, lifetime).then(() => (settled = true));
    await Promise.resolve();
    expect(seen).toHaveLength(1);
    expect(transport.lifetimeOf(7)).toBe(lifetime);
    expect(settled).toBe(false);
    await transport.send({ jsonrpc: '2.0', id: 7, result: {} });
    await held;
    expect(transport.lifetimeOf(7)).toBeUndefined();
    await transport.close();
  });

  it('releases a cancelled request (the SDK sends it no response) and every request on close', async () => {
    const transport = new LegacySseTransport('abc', '/m', 0);
    let closed = 0;
    transport.onclose = () => void (closed += 1);
    const cancelled = transport.deliver({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: {} }, new AbortLatch());
    const open = transport.deliver({ jsonrpc: '2.0', id: 'b', method: 'tools/call', params: {} }, new AbortLatch());
    await transport.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } }, new AbortLatch());
    await cancelled;
    await transport.close();
    await transport.close();
    await open;
    expect(closed).toBe(1);
    expect(transport.closed).toBe(true);
  });

  it('refuses a body that is not a JSON-RPC message', () => {
    const transport = new LegacySseTransport('abc', '/m', 0);
    expect(() => transport.deliver({ hello: 'world' }, new AbortLatch())).toThrow();
    void transport.close();
  });
});
