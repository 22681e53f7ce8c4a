import {
  createApprovalBroker,
  createExecApprovalsCapability,
  createInvoker,
  createMemoryExecApprovalStore,
  createRegistry,
  defineCapability,
  defineCommand,
  json,
  text,
  type InvocationHook,
  type Invoker,
} from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually } from '../../../../tests/support/poll.js';
import { startFakeGateway, type FakeConnection } from '../internal/fakeGateway.js';
import { createEphemeralDeviceIdentity, createWsSocketFactory } from '../node.js';
import type { GatewayNodeTransportOptions } from './gatewayNodeContract.js';
import { createGatewayNodeTransport, gatewayNodeDeclaration, toInvokeResult } from './gatewayNodeTransport.js';

/** A gateway node on the fake gateway at `url` (token `t`, real ws sockets, a linux client); `options` adds to or overrides that. */
function testNode(url: string, invoker: Invoker, identity: GatewayNodeTransportOptions['identity'], options: Partial<GatewayNodeTransportOptions> = {}) {
  return createGatewayNodeTransport({ url, token: 't', invoker, identity, createSocket: createWsSocketFactory(), client: { version: '0', platform: 'linux' }, ...options });
}

function fixture(hooks: readonly InvocationHook[] = []) {
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
  return { registry, invoker: createInvoker({ registry, hooks }), aborted: () => aborted };
}

describe('node transport helpers', () => {
  it('declares every command but localOnly ones; caps only for OpenClaw families', () => {
    const { registry } = fixture();
    expect(gatewayNodeDeclaration(registry)).toEqual({ caps: [], commands: ['demo.echo', 'demo.big', 'demo.wait', 'other.one'] });
    registry.register(
      defineCapability({
        category: 'screen',
        commands: [defineCommand({ name: 'screen.list', description: 'l', execute: () => 'l' }), defineCommand({ name: 'screen.local', description: 'l', localOnly: true, execute: () => 'l' })],
      }),
    );
    registry.register(defineCapability({ category: 'camera', commands: [defineCommand({ name: 'camera.local', description: 'l', localOnly: true, execute: () => 'l' })] }));
    registry.register(defineCapability({ category: 'tts', commands: [defineCommand({ name: 'tts.speak', description: 's', execute: () => 's' })] }));
    // camera's only command is withheld, so no camera cap.
    expect(gatewayNodeDeclaration(registry).caps).toEqual(['screen', 'talk']);
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
    const code = (error: { code: any; message: string; data?: Record<string, unknown> }) => (toInvokeResult('i', 'n', { result: { ok: false, error }, durationMs: 1 }) as { error: { code: string } }).error.code;
    expect(code({ code: 'payload_too_large', message: 'm' })).toBe('PAYLOAD_TOO_LARGE');
    expect(code({ code: 'unavailable', message: 'm' })).toBe('UNAVAILABLE');
    expect(code({ code: 'consent_required', message: 'm' })).toBe('PERMISSION_REQUIRED');
    expect(code({ code: 'failed', message: 'm', data: { code: 'LOCATION_DISABLED' } })).toBe('LOCATION_DISABLED');
    expect(code({ code: 'timeout', message: 'm', data: { code: 'TIMEOUT' } })).toBe('TIMEOUT');
    // Only upper-case codes pass through; anything else keeps capnode's code.
    expect(code({ code: 'failed', message: 'm', data: { code: 'no such thing!' } })).toBe('FAILED');
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
    await using node = testNode(gateway.url, invoker, identity, { client: { version: '0', platform: 'linux', deviceFamily: 'Linux' } });
    await node.ready({ timeoutMs: 10_000 });
    const connect = connection.received.find((frame) => frame.method === 'connect')!;
    expect(connect.params).toMatchObject({ role: 'node', caps: [], commands: ['demo.echo', 'demo.big', 'demo.wait', 'other.one'], client: { id: 'node-host', mode: 'node' } });

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

  it('a changed capability set is redeclared only once running invokes finished', async () => {
    await using gateway = await startFakeGateway(async (c) => {
      await c.handshake();
    });
    const { registry, invoker } = fixture();
    const identity = createEphemeralDeviceIdentity();
    await using node = testNode(gateway.url, invoker, identity, { declarationDebounceMs: 10, redeclareDrainMs: 60_000 });
    await node.ready({ timeoutMs: 10_000 });
    const first = await gateway.connection(0);
    first.send({ type: 'event', event: 'node.invoke.request', payload: { id: 'w', nodeId: identity.deviceId, command: 'demo.wait', params: {} } });
    await eventually(() => node.status().invocations.running === 1);
    registry.register(defineCapability({ category: 'later', commands: [defineCommand({ name: 'later.one', description: 'one', execute: () => 'one' })] }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(gateway.connections).toHaveLength(1);
    first.send({ type: 'event', event: 'node.invoke.cancel', payload: { invokeId: 'w', nodeId: identity.deviceId } });
    const second = await gateway.connection(1);
    const connect = await eventually(() => second.received.find((frame) => frame.method === 'connect'));
    expect(connect.params.commands).toContain('later.one');
  });

  it('closing the gateway node aborts a running invoke and sends no result for it', async () => {
    let connection!: FakeConnection;
    await using gateway = await startFakeGateway(async (c) => {
      connection = c;
      await c.handshake();
    });
    const { invoker, aborted } = fixture();
    const identity = createEphemeralDeviceIdentity();
    const node = testNode(gateway.url, invoker, identity);
    await node.ready({ timeoutMs: 10_000 });
    connection.send({ type: 'event', event: 'node.invoke.request', payload: { id: 'w', nodeId: identity.deviceId, command: 'demo.wait', params: {} } });
    await eventually(() => node.status().invocations.running === 1);
    await node.close();
    expect(aborted()).toBe(true);
    expect(node.status().invocations.running).toBe(0);
    expect(connection.received.some((frame) => frame.method === 'node.invoke.result')).toBe(false);
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
  const node = testNode(gateway.url, invoker, identity, { declarationDebounceMs: 60_000 });
  await node.ready({ timeoutMs: 10_000 });
  const invoke = async (id: string, command: string, paramsJSON = '{}', idempotencyKey?: string) => {
    connection.send({ type: 'event', event: 'node.invoke.request', payload: { id, nodeId: identity.deviceId, command, paramsJSON, ...(idempotencyKey ? { idempotencyKey } : {}) } });
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
    const piped: string[] = [];
    const invoker = createInvoker({ registry, hooks: [{ afterInvoke: (_invocation, request) => void piped.push(request.command) }] });
    await using surface = await startSurfaceNode(invoker);
    registry.unregister(declaredCap);
    registry.register(defineCapability({ category: 'demo', commands: [defineCommand({ name: 'demo.swap', description: 'local', localOnly: true, execute: () => 'local' })] }));
    expect(await surface.invoke('s1', 'demo.swap')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(piped).toEqual([]);
  });

  it('refuses an invoke of any command it did not declare before the pipeline, with the gateway’s code', async () => {
    const piped: string[] = [];
    const { invoker, registry } = fixture([{ afterInvoke: (_invocation, request) => void piped.push(request.command) }]);
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

/** A registry whose `system.run` is `execute` (a stand-in that counts runs), beside `others`. */
function systemRunStandIn(execute: (args: { command: string[] }) => ReturnType<typeof json> | Promise<ReturnType<typeof json>>, ...others: ReturnType<typeof defineCommand>[]) {
  const run = defineCommand({ name: 'system.run', description: 'counting stand-in', input: z.object({ command: z.array(z.string()) }), execute });
  return createRegistry([defineCapability({ category: 'system', commands: [run, ...others] })]);
}

describe('node transport: what OpenClaw gateways inject and expect', () => {
  it('a system.run retried with a fresh gateway runId replays; another command under the key is a conflict', async () => {
    let runs = 0;
    const registry = systemRunStandIn((args) => json({ runs: ++runs, argv: args.command, success: true }));
    await using surface = await startSurfaceNode(createInvoker({ registry }));
    const send = async (id: string, params: Record<string, unknown>, idempotencyKey: string) => {
      return surface.invoke(id, 'system.run', JSON.stringify(params), idempotencyKey);
    };
    const first = await send('r1', { command: ['echo', 'a'], runId: 'run-one' }, 'key-1');
    expect(first).toMatchObject({ ok: true, payload: { runs: 1 } });
    const retried = await send('r2', { command: ['echo', 'a'], runId: 'run-two' }, 'key-1');
    expect(retried).toMatchObject({ id: 'r2', ok: true, payload: { runs: 1 } });
    const other = await send('r3', { command: ['echo', 'b'], runId: 'run-three' }, 'key-1');
    expect(other).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('idempotencyKey') } });
    expect(runs).toBe(1);
    expect(surface.node.status().invocations).toMatchObject({ replayed: 1, conflicts: 1 });
  });

  it('a retry with a fresh runId joins the system.run still running; runId counts for any other command', async () => {
    let runs = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const registry = systemRunStandIn(
      async () => {
        runs += 1;
        await gate;
        return json({ runs, success: true });
      },
      defineCommand({ name: 'system.echo', description: 'echo', input: z.object({ v: z.string() }).loose(), execute: (args) => json({ v: args.v }) }),
    );
    await using surface = await startSurfaceNode(createInvoker({ registry }));
    const first = surface.invoke('j1', 'system.run', JSON.stringify({ command: ['echo', 'a'], runId: 'run-one' }), 'key-j');
    await eventually(() => runs === 1);
    const retried = surface.invoke('j2', 'system.run', JSON.stringify({ command: ['echo', 'a'], runId: 'run-two' }), 'key-j');
    await eventually(() => surface.node.status().invocations.joined === 1);
    open();
    expect(await first).toMatchObject({ id: 'j1', ok: true, payload: { runs: 1 } });
    expect(await retried).toMatchObject({ id: 'j2', ok: true, payload: { runs: 1 } });
    expect(runs).toBe(1);
    // Only system.run's runId is the gateway's: elsewhere it is an argument like any other.
    expect(await surface.invoke('e1', 'system.echo', JSON.stringify({ v: 'x', runId: 'one' }), 'key-e')).toMatchObject({ ok: true });
    const other = await surface.invoke('e2', 'system.echo', JSON.stringify({ v: 'x', runId: 'two' }), 'key-e');
    expect(other).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('idempotencyKey') } });
  });

  it('answers system.execApprovals.get|set in the snapshot shape, and a remote set asks this machine', async () => {
    const store = createMemoryExecApprovalStore({ mode: 'ask', allowlist: ['git status *', { pattern: 'make *', cwd: '/srv/project' }] });
    const broker = createApprovalBroker({ waitMode: 'block' });
    const asked: string[] = [];
    let answer: 'allow-once' | 'deny' = 'deny';
    broker.subscribe((event) => {
      if (event.type !== 'requested') return;
      asked.push(event.approval.summary ?? event.approval.commandLine ?? '');
      queueMicrotask(() => broker.resolve(event.approval.id, answer));
    });
    const registry = createRegistry([createExecApprovalsCapability({ store, broker })]);
    await using surface = await startSurfaceNode(createInvoker({ registry }));
    const get = await surface.invoke('g1', 'system.execApprovals.get', '{}');
    expect(get).toMatchObject({
      ok: true,
      payload: {
        path: expect.any(String),
        exists: true,
        hash: expect.any(String),
        file: {
          version: 1,
          defaults: { security: 'allowlist', ask: 'on-miss', askFallback: 'deny', autoAllowSkills: false },
          agents: { '*': { allowlist: [{ id: expect.stringMatching(/^capnode-/), pattern: 'git status *' }, { id: expect.stringMatching(/^capnode-/), pattern: 'make *' }] } },
        },
        resolvedDefaults: { security: 'allowlist', ask: 'on-miss' },
      },
    });
    const snapshot = (get as { payload: any }).payload;
    const file = structuredClone(snapshot.file);
    file.defaults.ask = 'off';
    file.agents['*'].allowlist.push({ pattern: '/usr/bin/uptime' });
    const params = { file, baseHash: snapshot.hash };

    // The user says no: nothing changes.
    const refused = await surface.invoke('s1', 'system.execApprovals.set', JSON.stringify(params));
    expect(refused).toMatchObject({ ok: false, error: { code: 'DENIED' } });
    expect(asked).toHaveLength(1);
    expect(await store.get()).toMatchObject({ mode: 'ask' });

    answer = 'allow-once';
    const applied = await surface.invoke('s2', 'system.execApprovals.set', JSON.stringify(params));
    expect(applied).toMatchObject({ ok: true, payload: { file: { defaults: { security: 'allowlist', ask: 'off' } } } });
    // The scoped entry came back by id with its cwd scope; the new single-program pattern allows any arguments.
    expect(await store.get()).toEqual({ mode: 'allowlist', allowlist: ['git status *', { pattern: 'make *', cwd: '/srv/project' }, '/usr/bin/uptime *'] });

    const stale = await surface.invoke('s3', 'system.execApprovals.set', JSON.stringify(params));
    expect(stale).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('changed since last load') } });
    const fresh = (await surface.invoke('g2', 'system.execApprovals.get', '{}')) as { payload: any };
    for (const [change, message] of [
      [{ defaults: { security: 'full', ask: 'always' } }, "ask 'always'"],
      [{ agents: { main: { allowlist: [{ pattern: 'rm *' }] } } }, 'one exec policy for every agent'],
      [{ agents: { '*': { allowlist: [{ pattern: '/usr/bin/*' }] } } }, 'path globs'],
      [{ agents: { '*': { allowlist: [{ pattern: 'git', argPattern: '^status' }] } } }, 'argPattern'],
    ] as const) {
      const result = await surface.invoke(`bad-${message}`, 'system.execApprovals.set', JSON.stringify({ file: { ...fresh.payload.file, ...change }, baseHash: fresh.payload.hash }));
      expect(result, message).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining(message) } });
    }
    const native = await surface.invoke('n1', 'system.execApprovals.set', JSON.stringify({ defaultAction: 'allow', rules: [], baseHash: fresh.payload.hash }));
    expect(native).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(asked).toHaveLength(2);
    await broker.close();
  });
});
