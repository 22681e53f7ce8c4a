import { createInvoker, createRegistry, defineCapability, defineCommand, json, text, type Invoker } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeGateway, type FakeConnection } from './internal/fakeGateway.js';
import { createEphemeralDeviceIdentity, createWsSocketFactory } from './node.js';
import { createNodeTransport, nodeDeclaration, toInvokeResult } from './nodeTransport.js';

function fixture() {
  let aborted = false;
  const registry = createRegistry([
    defineCapability({
      category: 'demo',
      commands: [
        defineCommand({ name: 'demo.echo', description: 'echo', input: z.object({ v: z.string() }), execute: (args) => json({ v: args.v }) }),
        defineCommand({ name: 'demo.big', description: 'big', execute: () => text('b'.repeat(10_000)) }),
        defineCommand({
          name: 'demo.wait',
          description: 'waits until cancelled',
          execute: (_args, context) =>
            new Promise((_, reject) =>
              context.signal.addEventListener('abort', () => {
                aborted = true;
                reject(context.signal.reason);
              }),
            ),
        }),
        defineCommand({ name: 'demo.local', description: 'local', localOnly: true, execute: () => 'x' }),
      ],
    }),
    defineCapability({ category: 'other', commands: [defineCommand({ name: 'other.one', description: 'one', execute: () => 'one' })] }),
  ]);
  return { registry, invoker: createInvoker({ registry }), aborted: () => aborted };
}

describe('node transport helpers', () => {
  it('declares every command but localOnly ones, categories as caps', () => {
    const { registry } = fixture();
    expect(nodeDeclaration(registry)).toEqual({ caps: ['demo', 'other'], commands: ['demo.echo', 'demo.big', 'demo.wait', 'other.one'] });
  });

  it('maps pipeline outcomes to node.invoke.result params', () => {
    expect(toInvokeResult('i', 'n', { result: json({ a: 1 }), durationMs: 1 })).toEqual({ id: 'i', nodeId: 'n', ok: true, payload: { a: 1 } });
    expect(toInvokeResult('i', 'n', { result: text('hi'), durationMs: 1 })).toEqual({ id: 'i', nodeId: 'n', ok: true, payload: { content: [{ type: 'text', text: 'hi' }] } });
    expect(toInvokeResult('i', 'n', { result: { ok: false, error: { code: 'invalid_arguments', message: 'bad' } }, durationMs: 1 })).toEqual({
      id: 'i',
      nodeId: 'n',
      ok: false,
      error: { code: 'INVALID_ARGUMENTS', message: 'bad' },
    });
  });
});

describe('node transport against a faulty gateway', () => {
  it('answers malformed and oversized cases with errors instead of failing', async () => {
    let connection!: FakeConnection;
    await using gateway = await startFakeGateway(async (c) => {
      connection = c;
      await c.handshake({ policy: { maxPayload: 4096 } });
    });
    const { invoker, aborted } = fixture();
    const identity = createEphemeralDeviceIdentity();
    await using node = createNodeTransport({
      url: gateway.url,
      token: 't',
      invoker,
      identity,
      createSocket: createWsSocketFactory(),
      client: { version: '0', platform: 'linux', deviceFamily: 'Linux' },
    });
    await node.ready({ timeoutMs: 10_000 });
    const connect = connection.received.find((frame) => frame.method === 'connect')!;
    expect(connect.params).toMatchObject({ role: 'node', caps: ['demo', 'other'], commands: ['demo.echo', 'demo.big', 'demo.wait', 'other.one'], client: { id: 'node-host', mode: 'node' } });

    const invoke = (payload: Record<string, unknown>) => connection.send({ type: 'event', event: 'node.invoke.request', payload: { nodeId: identity.deviceId, ...payload } });
    const resultFor = (id: string) => connection.next((frame) => frame.method === 'node.invoke.result' && frame.params.id === id);
    const answer = async (id: string) => {
      const frame = await resultFor(id);
      connection.respond(frame.id, { ok: true });
      return frame.params;
    };

    invoke({ id: 'a', command: 'demo.echo', paramsJSON: '{"v":"x"}', idempotencyKey: 'k-a' });
    expect(await answer('a')).toEqual({ id: 'a', nodeId: identity.deviceId, ok: true, payload: { v: 'x' } });

    invoke({ id: 'b', command: 'demo.echo', paramsJSON: '{not json' });
    expect(await answer('b')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: 'paramsJSON is not valid JSON' } });

    connection.send({ type: 'event', event: 'node.invoke.request', payload: { id: 'c', nodeId: identity.deviceId } });
    expect(await answer('c')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });

    invoke({ id: 'd', command: 'demo.big', params: {} });
    expect(await answer('d')).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });

    invoke({ id: 'e', command: 'demo.echo', paramsJSON: '{"v":"other"}', idempotencyKey: 'k-a' });
    expect(await answer('e')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('idempotencyKey') } });

    invoke({ id: 'f', command: 'demo.wait', params: {} });
    await new Promise((resolve) => setTimeout(resolve, 100));
    connection.send({ type: 'event', event: 'node.invoke.cancel', payload: { invokeId: 'f', nodeId: identity.deviceId } });
    expect(await answer('f')).toMatchObject({ ok: false, error: { code: 'CANCELLED' } });
    expect(aborted()).toBe(true);

    connection.send({ type: 'event', event: 'node.invoke.request', payload: { id: 'g', nodeId: 'someone-else', command: 'demo.echo', paramsJSON: '{"v":"x"}' } });
    invoke({ id: 'h', command: 'other.one' });
    expect(await answer('h')).toMatchObject({ ok: true });
    expect(connection.received.some((frame) => frame.method === 'node.invoke.result' && frame.params.id === 'g')).toBe(false);
    expect(node.status().connection.state).toBe('connected');
  });
});

/**
 * A gateway node on a fake gateway whose declaration never refreshes during the test (so a command
 * registered later stays undeclared); `invoke` sends one `node.invoke.request` and returns the result params.
 */
async function startSurfaceNode(invoker: Invoker) {
  let connection!: FakeConnection;
  const gateway = await startFakeGateway(async (c) => {
    connection = c;
    await c.handshake();
  });
  const identity = createEphemeralDeviceIdentity();
  const node = createNodeTransport({
    url: gateway.url,
    token: 't',
    invoker,
    identity,
    createSocket: createWsSocketFactory(),
    client: { version: '0', platform: 'linux' },
    declarationDebounceMs: 60_000,
  });
  await node.ready({ timeoutMs: 10_000 });
  const invoke = async (id: string, command: string, paramsJSON = '{}') => {
    connection.send({ type: 'event', event: 'node.invoke.request', payload: { id, nodeId: identity.deviceId, command, paramsJSON } });
    const frame = await connection.next((f) => f.method === 'node.invoke.result' && f.params.id === id);
    connection.respond(frame.id, { ok: true });
    return frame.params;
  };
  return {
    node,
    identity,
    invoke,
    async [Symbol.asyncDispose]() {
      await node.close();
      await gateway.close();
    },
  };
}

describe('node transport surface', () => {
  it('refuses a declared name that now resolves to a localOnly command (replaced after the declaration)', async () => {
    const registry = createRegistry([]);
    const declaredCap = defineCapability({ category: 'demo', commands: [defineCommand({ name: 'demo.swap', description: 'declared', execute: () => 'declared' })] });
    registry.register(declaredCap);
    const invoker = createInvoker({ registry });
    const piped: string[] = [];
    invoker.use({ afterInvoke: (_invocation, request) => void piped.push(request.command) });
    await using surface = await startSurfaceNode(invoker);
    registry.unregister(declaredCap);
    registry.register(defineCapability({ category: 'demo', commands: [defineCommand({ name: 'demo.swap', description: 'local', localOnly: true, execute: () => 'local' })] }));
    expect(await surface.invoke('s1', 'demo.swap')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(piped).toEqual([]);
  });

  it('refuses an invoke of any command it did not declare before the pipeline, with the gateway’s code', async () => {
    const { invoker, registry } = fixture();
    const piped: string[] = [];
    invoker.use({ afterInvoke: (_invocation, request) => void piped.push(request.command) });
    await using surface = await startSurfaceNode(invoker);
    const { node, identity, invoke } = surface;
    registry.register(defineCapability({ category: 'late', commands: [defineCommand({ name: 'late.one', description: 'late', execute: () => 'late' })] }));

    const undeclared = ['demo.local', 'DEMO.ECHO', 'Demo.Echo', 'other.ONE', ' demo.echo', 'demo.echo ', 'late.one', 'constructor', '__proto__', 'toString', 'demo.echo\u0000'];
    for (const [index, command] of undeclared.entries()) {
      const result = await invoke(`u${index}`, command, '{"v":"x"}');
      expect(result, JSON.stringify(command)).toEqual({
        id: `u${index}`,
        nodeId: identity.deviceId,
        ok: false,
        error: { code: 'INVALID_REQUEST', message: `node command not allowed: ${JSON.stringify(command)} is not declared by this node` },
      });
    }
    expect(piped).toEqual([]);

    // Declared names still run, through the pipeline.
    expect(await invoke('ok', 'demo.echo', '{"v":"x"}')).toMatchObject({ ok: true, payload: { v: 'x' } });
    expect(piped).toEqual(['demo.echo']);

    // Arguments nested past MAX_ARGUMENTS_DEPTH are refused too, with a clear message, not a stack overflow.
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const refused = await invoke('deep', 'other.one', deep);
    expect(refused).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENTS', message: 'Invalid arguments for other.one: they nest deeper than 64 levels.' } });
    expect(piped).toEqual(['demo.echo']);
    expect(node.status().connection.state).toBe('connected');
  });
});
