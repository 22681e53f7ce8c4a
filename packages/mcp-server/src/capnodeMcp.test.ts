import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { createCapnodeMcp } from './capnodeMcp.js';

function setup() {
  let aborted = 0;
  const capability = defineCapability({
    category: 'unit',
    commands: [
      defineCommand({ name: 'unit.hello', description: 'Says hello.', execute: () => 'hello' }),
      defineCommand({
        name: 'unit.wait',
        description: 'Waits until aborted.',
        execute: (_args, { signal }) =>
          new Promise<string>((_resolve, reject) => {
            signal.addEventListener('abort', () => {
              aborted += 1;
              reject(signal.reason);
            });
          }),
      }),
    ],
  });
  const invoker = createInvoker({ registry: createRegistry([capability]) });
  return { mcp: createCapnodeMcp({ invoker, maxBodyBytes: 256 }), aborted: () => aborted };
}

const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  new Request('http://127.0.0.1/', { method: 'POST', headers, body });

describe('createCapnodeMcp().fetch (runtime-neutral face)', () => {
  it('reads and parses the body itself when none is given', async () => {
    await using mcp = setup().mcp;
    const response = await mcp.fetch(post('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"unit.hello"}}'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hello' }] } });
  });

  it('refuses a wrong Content-Type (415), an oversized body (413) and garbage (-32700) when it reads the body', async () => {
    await using mcp = setup().mcp;
    expect((await mcp.fetch(post('{}', { 'content-type': 'text/plain' }))).status).toBe(415);
    expect((await mcp.fetch(post(JSON.stringify({ pad: 'x'.repeat(300) })))).status).toBe(413);
    const garbage = await mcp.fetch(post('{'));
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('answers GET and DELETE with 405 and a batch over 100 messages with -32600', async () => {
    await using mcp = setup().mcp;
    expect((await mcp.fetch(new Request('http://127.0.0.1/'))).status).toBe(405);
    expect((await mcp.fetch(new Request('http://127.0.0.1/', { method: 'DELETE' }))).status).toBe(405);
    const batch = Array.from({ length: 101 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' }));
    const response = await mcp.fetch(post('[]'), { parsedBody: batch });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it("aborts a call's capability signal through the request signal and still answers", async () => {
    const { mcp, aborted } = setup();
    await using _mcp = mcp;
    const controller = new AbortController();
    const body = { jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'unit.wait' } };
    const pending = mcp.fetch(post('{}'), { parsedBody: body, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(mcp.inFlight).toBe(1);
    controller.abort(new Error('deadline'));
    const json = (await (await pending).json()) as { result: { isError?: boolean; content: Array<{ text: string }> } };
    expect(json.result.isError).toBe(true);
    expect(json.result.content[0]?.text).toContain('cancelled');
    expect(aborted()).toBe(1);
    expect(mcp.inFlight).toBe(0);
  });

  it('answers 503 once closed, and closes idempotently', async () => {
    const { mcp } = setup();
    await Promise.all([mcp.close(), mcp.close()]);
    const response = await mcp.fetch(post('{"jsonrpc":"2.0","id":1,"method":"ping"}'));
    expect(response.status).toBe(503);
  });
});

describe('createCapnodeMcp().createServer (SDK transports)', () => {
  it('routes requests, notifications and responses to client-bound requests over an SDK transport', async () => {
    const { Client } = await import('@modelcontextprotocol/client');
    const { InMemoryTransport } = await import('@modelcontextprotocol/server');
    await using mcp = setup().mcp;
    const server = mcp.createServer();
    let initialized = false;
    server.oninitialized = () => {
      initialized = true;
    };
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'unit-client', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      expect(await client.callTool({ name: 'unit.hello', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'hello' }] });
      expect(server.getClientVersion()?.name).toBe('unit-client');
      expect(await server.ping()).toEqual({});
      expect(initialized).toBe(true);
    } finally {
      await client.close();
    }
  });
});
