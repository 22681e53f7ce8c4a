import { createInvoker, createRegistry, defineCapability, defineCommand, fail, json, type InvocationRequest } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { startFakeGateway } from '../internal/fakeGateway.js';
import { createEphemeralDeviceIdentity, createWsSocketFactory } from '../node.js';
import type { GatewayNodeMcpTool, GatewayNodePublications, GatewayNodeSkill } from './gatewayNodeContract.js';
import { createGatewayNodeTransport } from './gatewayNodeTransport.js';
import { GATEWAY_NODE_MAX_TOOLS, GATEWAY_NODE_TOOL_NAME, acceptableSkills, publishedToolNames } from './nodePublisher.js';

const tool = (server: string, name: string): GatewayNodeMcpTool => ({ server, tool: name, command: `${server}__${name}`, description: `${name} of ${server}` });

describe('publishedToolNames', () => {
  it('maps server and tool to names OpenClaw accepts, deterministically, deduped case-insensitively', () => {
    const tools = [tool('everything', 'echo'), tool('9lives', 'a.b/c'), tool('Everything', 'Echo'), tool('everything', 'echo'), tool('x', 'y'.repeat(80))];
    const first = publishedToolNames(tools).tools;
    const second = publishedToolNames([...tools].reverse()).tools;
    expect(second).toEqual(first);
    expect(first.map((entry) => entry.name)).toEqual(['t_9lives__a_b_c', 'Everything__Echo', 'everything__echo_2', `x__${'y'.repeat(61)}`]);
    for (const entry of first) expect(entry.name).toMatch(GATEWAY_NODE_TOOL_NAME);
    expect(first.find((entry) => entry.name === 'everything__echo_2')).toMatchObject({ server: 'everything', tool: 'echo', command: 'everything__echo' });
  });

  it(`publishes at most ${GATEWAY_NODE_MAX_TOOLS} tools and says how many were left out`, () => {
    const many = Array.from({ length: GATEWAY_NODE_MAX_TOOLS + 3 }, (_, index) => tool('s', `t${String(index).padStart(3, '0')}`));
    const named = publishedToolNames(many);
    expect(named.tools).toHaveLength(GATEWAY_NODE_MAX_TOOLS);
    expect(named.dropped).toBe(3);
  });
});

describe('acceptableSkills', () => {
  it('keeps skills OpenClaw accepts and names the rest', () => {
    const skill = (name: string, content = `---\nname: ${name}\ndescription: d\n---\nbody`): GatewayNodeSkill => ({ name, description: 'd', content });
    const result = acceptableSkills([skill('capnode'), skill('Bad'), skill('a--b'), skill('capnode'), skill('big', 'x'.repeat(65_537)), { name: 'nodesc', description: ' ', content: 'x' }]);
    expect(result.skills.map((entry) => entry.name)).toEqual(['capnode']);
    expect(result.dropped).toEqual(['Bad', 'a--b', 'capnode', 'big', 'nodesc']);
  });
});

type FakeConnection = Awaited<ReturnType<Awaited<ReturnType<typeof startFakeGateway>>['connection']>>;

/** Sends `mcp.tools.call.v1` invokes to the gateway node over `connection` and reads their results. */
function mcpCalls(connection: FakeConnection, nodeId: string) {
  return {
    invoke: (id: string, params: unknown) =>
      connection.send({ type: 'event', event: 'node.invoke.request', payload: { id, nodeId, command: 'mcp.tools.call.v1', params, idempotencyKey: id } }),
    answer: async (id: string) => {
      const frame = await connection.next((candidate) => candidate.method === 'node.invoke.result' && candidate.params.id === id);
      connection.respond(frame.id, { ok: true });
      return frame.params;
    },
  };
}

function publications(initial: readonly GatewayNodeMcpTool[], skills: readonly GatewayNodeSkill[] = []) {
  let tools = initial;
  const listeners = new Set<() => void>();
  const source: GatewayNodePublications = {
    mcpTools: () => tools,
    skills: () => skills,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    source,
    set(next: readonly GatewayNodeMcpTool[]) {
      tools = next;
      for (const listener of listeners) listener();
    },
  };
}

describe('gateway node publications', () => {
  it('declares mcp.tools.call.v1, publishes tools and skills after connecting and again on change, and answers calls through the pipeline', async () => {
    const calls: InvocationRequest[] = [];
    const registry = createRegistry([
      defineCapability({ category: 'demo', commands: [defineCommand({ name: 'demo.one', description: 'one', execute: () => 'one' })] }),
      defineCapability({
        category: 'mcp',
        commands: [
          defineCommand({ name: 'srv__echo', description: 'echo', localOnly: true, execute: (args: { message?: string }) => json({ echoed: args.message ?? '' }) }),
          defineCommand({ name: 'srv__broken', description: 'fails', localOnly: true, execute: () => fail('failed', 'the tool said no') }),
          defineCommand({ name: 'other__hidden', description: 'not published', localOnly: true, execute: () => 'hidden' }),
        ],
      }),
    ]);
    const invoker = createInvoker({ registry, hooks: [{ name: 'audit', afterInvoke: (invocation) => void (invocation && calls.push(invocation.request)) }] });
    const skill: GatewayNodeSkill = { name: 'capnode', description: 'Use capnode.', content: '---\nname: capnode\ndescription: Use capnode.\n---\n# capnode\n' };
    const source = publications([tool('srv', 'echo'), tool('srv', 'broken')], [skill]);
    await using gateway = await startFakeGateway();
    const identity = createEphemeralDeviceIdentity();
    await using node = createGatewayNodeTransport({ url: gateway.url, token: 't', invoker, identity, createSocket: createWsSocketFactory(), client: { version: '0', platform: 'linux' }, publications: source.source });
    await node.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    const connect = connection.received.find((frame) => frame.method === 'connect')!;
    expect(connect.params.commands).toEqual(['demo.one', 'mcp.tools.call.v1']);

    const update = await connection.next((frame) => frame.method === 'node.pluginTools.update');
    expect(update.params.tools).toEqual([
      { pluginId: 'node-mcp', name: 'srv__broken', description: 'broken of srv', parameters: { type: 'object', properties: {}, additionalProperties: true }, command: 'mcp.tools.call.v1', mcp: { server: 'srv', tool: 'broken' } },
      { pluginId: 'node-mcp', name: 'srv__echo', description: 'echo of srv', parameters: { type: 'object', properties: {}, additionalProperties: true }, command: 'mcp.tools.call.v1', mcp: { server: 'srv', tool: 'echo' } },
    ]);
    connection.respond(update.id, { nodeId: identity.deviceId, tools: [] });
    const skills = await connection.next((frame) => frame.method === 'node.skills.update');
    expect(skills.params).toEqual({ skills: [skill] });
    connection.respond(skills.id, { nodeId: identity.deviceId, skills: [] });

    const { invoke, answer } = mcpCalls(connection, identity.deviceId);
    invoke('a', { server: 'srv', tool: 'echo', arguments: { message: 'hi' } });
    expect(await answer('a')).toEqual({ id: 'a', nodeId: identity.deviceId, ok: true, payload: { content: [{ type: 'text', text: JSON.stringify({ echoed: 'hi' }, null, 2) }], structuredContent: { echoed: 'hi' } } });
    expect(calls.at(-1)).toMatchObject({ command: 'srv__echo', transport: 'gateway', args: { message: 'hi' } });
    invoke('b', { server: 'srv', tool: 'broken' });
    expect(await answer('b')).toMatchObject({ ok: false, error: { code: 'FAILED', message: 'the tool said no' } });

    // Unknown, unpublished or malformed: refused before the pipeline.
    const before = calls.length;
    invoke('c', { server: 'other', tool: 'hidden' });
    expect(await answer('c')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('not published') } });
    invoke('d', { server: 'srv', tool: 'echo', arguments: 'text' });
    expect(await answer('d')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    invoke('e', { tool: 'echo' });
    expect(await answer('e')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(calls.length).toBe(before);

    // A change republishes on the same connection; a withdrawn tool is refused at once.
    source.set([tool('srv', 'broken')]);
    const again = await connection.next((frame) => frame.method === 'node.pluginTools.update');
    expect(again.params.tools.map((entry: { name: string }) => entry.name)).toEqual(['srv__broken']);
    connection.respond(again.id, { nodeId: identity.deviceId, tools: [] });
    invoke('f', { server: 'srv', tool: 'echo', arguments: {} });
    expect(await answer('f')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('not published') } });
    expect(calls.length).toBe(before);
    expect(gateway.connections).toHaveLength(1);
  });

  it('an update the gateway refuses (its pairing changed meanwhile) is sent again', async () => {
    const registry = createRegistry([defineCapability({ category: 'mcp', commands: [defineCommand({ name: 'srv__echo', description: 'echo', localOnly: true, execute: () => 'x' })] })]);
    const source = publications([tool('srv', 'echo')]);
    await using gateway = await startFakeGateway();
    await using node = createGatewayNodeTransport({ url: gateway.url, token: 't', invoker: createInvoker({ registry }), identity: createEphemeralDeviceIdentity(), createSocket: createWsSocketFactory(), client: { version: '0', platform: 'linux' }, publications: source.source });
    await node.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    const first = await connection.next((frame) => frame.method === 'node.pluginTools.update');
    connection.fail(first.id, { code: 'UNAVAILABLE', message: 'node pairing changed before request dispatch', details: { code: 'PAIRING_CHANGED' } });
    const second = await connection.next((frame) => frame.method === 'node.pluginTools.update', 5_000);
    expect(second.params).toEqual(first.params);
  });

  it('without publications the node declares no mcp.tools.call.v1 and refuses it', async () => {
    const registry = createRegistry([defineCapability({ category: 'demo', commands: [defineCommand({ name: 'demo.one', description: 'one', execute: () => 'one' })] })]);
    await using gateway = await startFakeGateway();
    const identity = createEphemeralDeviceIdentity();
    await using node = createGatewayNodeTransport({ url: gateway.url, token: 't', invoker: createInvoker({ registry }), identity, createSocket: createWsSocketFactory(), client: { version: '0', platform: 'linux' } });
    await node.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    expect(connection.received.find((frame) => frame.method === 'connect')!.params.commands).toEqual(['demo.one']);
    connection.send({ type: 'event', event: 'node.invoke.request', payload: { id: 'x', nodeId: identity.deviceId, command: 'mcp.tools.call.v1', params: { server: 's', tool: 't' } } });
    const result = await connection.next((frame) => frame.method === 'node.invoke.result');
    expect(result.params).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
  });
});

describe('mcp.tools.call.v1 params that only look like a published tool', () => {
  it('the server and tool are matched as published (unsanitised), never by the agent-visible name; __proto__ and constructor reach nothing; arguments must be a plain object', async () => {
    const calls: InvocationRequest[] = [];
    const registry = createRegistry([
      defineCapability({
        category: 'mcp',
        commands: [defineCommand({ name: 'srv__a_b', description: 'dotted', localOnly: true, execute: (args: Record<string, unknown>) => json({ got: Object.keys(args) }) })],
      }),
    ]);
    const invoker = createInvoker({ registry, hooks: [{ name: 'audit', afterInvoke: (invocation) => void (invocation && calls.push(invocation.request)) }] });
    const source = publications([{ server: 'srv', tool: 'a.b', command: 'srv__a_b', description: 'a.b of srv' }]);
    await using gateway = await startFakeGateway();
    const identity = createEphemeralDeviceIdentity();
    await using node = createGatewayNodeTransport({ url: gateway.url, token: 't', invoker, identity, createSocket: createWsSocketFactory(), client: { version: '0', platform: 'linux' }, publications: source.source });
    await node.ready({ timeoutMs: 10_000 });
    const connection = await gateway.connection(0);
    const update = await connection.next((frame) => frame.method === 'node.pluginTools.update');
    expect(update.params.tools.map((entry: { name: string }) => entry.name)).toEqual(['srv__a_b']);
    connection.respond(update.id, { nodeId: identity.deviceId, tools: [] });
    const skills = await connection.next((frame) => frame.method === 'node.skills.update');
    connection.respond(skills.id, { nodeId: identity.deviceId, skills: [] });

    const { invoke, answer } = mcpCalls(connection, identity.deviceId);
    const notPublished = { ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringContaining('not published') } };
    // The published (server, tool) pair reaches it; the sanitised spelling and the published name do not.
    invoke('ok', { server: 'srv', tool: 'a.b', arguments: { x: 1 } });
    expect(await answer('ok')).toMatchObject({ ok: true });
    const reached = calls.length;
    let index = 0;
    for (const params of [
      { server: 'srv', tool: 'a_b' },
      { server: 'srv', tool: 'A.B' },
      { server: 'srv__a_b', tool: '' },
      { server: 'srv', tool: '__proto__' },
      { server: '__proto__', tool: 'constructor' },
      { server: 'constructor', tool: 'constructor' },
      { server: 'srv', tool: 'toString' },
      { server: 'srv\0a', tool: 'b' },
    ]) {
      const id = `n${(index += 1)}`;
      invoke(id, params);
      expect(await answer(id), JSON.stringify(params)).toMatchObject(notPublished);
    }
    // Arguments that are not a plain object, or not strings for server/tool: refused before the pipeline.
    for (const params of [
      { server: 'srv', tool: 'a.b', arguments: [1] },
      { server: 'srv', tool: 'a.b', arguments: 'x' },
      { server: 'srv', tool: 'a.b', arguments: 3 },
      { server: ['srv'], tool: 'a.b' },
      { server: 'srv', tool: { toString: 'a.b' } },
    ]) {
      const id = `m${(index += 1)}`;
      invoke(id, params);
      expect(await answer(id), JSON.stringify(params)).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    }
    // Arguments nested too deep are refused; a large flat object goes through unchanged.
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 200; level += 1) deep = { d: deep };
    invoke('deep', { server: 'srv', tool: 'a.b', arguments: deep });
    expect(await answer('deep')).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENTS' } });
    expect(calls.length).toBe(reached);
    const wide = Object.fromEntries(Array.from({ length: 2_000 }, (_, key) => [`k${key}`, 'v'.repeat(50)]));
    invoke('wide', { server: 'srv', tool: 'a.b', arguments: wide });
    expect(await answer('wide')).toMatchObject({ ok: true });
    expect(calls.at(-1)).toMatchObject({ command: 'srv__a_b', transport: 'gateway' });
  });
});
