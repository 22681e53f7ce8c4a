import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOpenAgentHost } from '../support/openAgentHost.js';
import { eventually } from '../support/poll.js';

describe('OpenAgent channel: lifecycle', () => {
  it('answers a call before hello_ack with not_registered', async () => {
    await using oa = await startOpenAgentHost({ bridge: { ack: () => undefined } });
    const call = await oa.bridge.call('oa.echo', { text: 'x' });
    expect(await oa.bridge.result(call.call_id as string)).toMatchObject({ error: { code: 'not_registered' } });
    expect(oa.host.status().openagent.phase).toBe('connecting');
  });

  it('closes with 1008 when hello_ack names another device, and shows the reason', async () => {
    await using oa = await startOpenAgentHost({ bridge: { ack: (ack) => ({ ...ack, device_id: 'not-me', reason: 'device revoked' }) } });
    await eventually(() => oa.bridge.connections[0]?.closed, { what: 'the close' });
    expect(oa.bridge.connections[0]!.closed!.code).toBe(1008);
    const status = await eventually(() => (oa.host.status().openagent.phase === 'unavailable' ? oa.host.status().openagent : undefined), { what: 'unavailable' });
    expect(status.lastError).toContain('device revoked');
  });

  it('reconnects after heartbeat acks stop, with the same instance id and generation', async () => {
    await using oa = await startOpenAgentHost({ openagent: { heartbeatMs: 1000 } });
    const first = await oa.bridge.hello(1);
    await eventually(() => oa.bridge.framesOf('capability_heartbeat').length >= 1, { what: 'a heartbeat' });
    oa.bridge.heartbeatAcks = false;
    await eventually(() => oa.bridge.connections[0]!.closed, { what: 'the dropped connection', timeoutMs: 15_000 });
    oa.bridge.heartbeatAcks = true;
    const second = await oa.bridge.hello(2);
    expect(second.client_instance_id).toBe(first.client_instance_id);
    expect(second.generation).toBe(first.generation);
    const call = await oa.bridge.call('oa.echo', { text: 'again' });
    expect(await oa.bridge.result(call.call_id as string)).toMatchObject({ result: { content: [{ text: 'again' }] } });
  });

  it('does not reconnect after close 4009', async () => {
    await using oa = await startOpenAgentHost();
    await oa.bridge.hello(1);
    oa.bridge.current()!.socket.close(4009, 'connection_replaced');
    const status = await eventually(() => (oa.host.status().openagent.phase === 'unavailable' ? oa.host.status().openagent : undefined), { what: 'unavailable' });
    expect(status.closeCode).toBe(4009);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(oa.bridge.connections).toHaveLength(1);
  });

  it('cancels: a read-only call ends with an error result; a mutating one sends nothing and drops the socket', async () => {
    await using oa = await startOpenAgentHost();
    const file = join(oa.home, 'lines.txt');
    const reader = await oa.bridge.call('oa.wait', { ms: 60_000 });
    await eventually(() => oa.host.status().openagent.activeCalls === 1, { what: 'the call running' });
    oa.bridge.send({ type: 'client_tool_cancel', call_id: reader.call_id, generation: 2, reason: 'server_cancelled' }); // other generation: ignored
    oa.bridge.send({ type: 'client_tool_cancel', call_id: reader.call_id, generation: 1, reason: 'server_cancelled' });
    expect(await oa.bridge.result(reader.call_id as string)).toMatchObject({ error: { code: 'cancelled' } });
    const writer = await oa.bridge.call('oa.append', { file, line: 'one', ms: 60_000 });
    await eventually(() => oa.host.status().openagent.activeCalls === 1, { what: 'the mutating call running' });
    oa.bridge.send({ type: 'client_tool_cancel', call_id: writer.call_id, generation: 1, reason: 'deadline_exceeded' });
    await eventually(() => oa.bridge.connections[0]!.closed, { what: 'the dropped socket' });
    expect(oa.bridge.framesOf('client_tool_result').some((frame) => frame.call_id === writer.call_id)).toBe(false);
    await oa.bridge.hello(2); // and it comes back
  });

  it('classifies by argument: the catalog carries classification_by_argument and a cancel follows the call\'s own class', async () => {
    await using oa = await startOpenAgentHost();
    const hello = await oa.bridge.hello(1);
    const tools = (hello.servers as { tools: { name: string; classification?: string; classification_by_argument?: unknown }[] }[]).flatMap((server) => server.tools);
    expect(tools.find((tool) => tool.name === 'oa.touch')).toMatchObject({ classification: 'mutating', classification_by_argument: { mode: { peek: 'read_only' } } });
    const peek = await oa.bridge.call('oa.touch', { mode: 'peek', ms: 60_000 });
    await eventually(() => oa.host.status().openagent.activeCalls === 1, { what: 'the peek running' });
    oa.bridge.send({ type: 'client_tool_cancel', call_id: peek.call_id, generation: 1, reason: 'server_cancelled' });
    expect(await oa.bridge.result(peek.call_id as string)).toMatchObject({ error: { code: 'cancelled' } });
    const poke = await oa.bridge.call('oa.touch', { mode: 'poke', ms: 60_000 });
    await eventually(() => oa.host.status().openagent.activeCalls === 1, { what: 'the poke running' });
    oa.bridge.send({ type: 'client_tool_cancel', call_id: poke.call_id, generation: 1, reason: 'server_cancelled' });
    await eventually(() => oa.bridge.connections[0]!.closed, { what: 'the dropped socket' });
    expect(oa.bridge.framesOf('client_tool_result').some((frame) => frame.call_id === poke.call_id)).toBe(false);
  });

  it('ends a call at its deadline', async () => {
    await using oa = await startOpenAgentHost();
    const call = await oa.bridge.call('oa.wait', { ms: 60_000 }, { deadline_ms: 300 });
    expect(await oa.bridge.result(call.call_id as string)).toMatchObject({ error: { code: 'cancelled' } });
  });

  it('disable while calls run: cancels them, closes the channel, reports disabled', async () => {
    await using oa = await startOpenAgentHost();
    await oa.bridge.call('oa.wait', { ms: 60_000 });
    await oa.bridge.call('oa.wait', { ms: 60_000 });
    await eventually(() => oa.host.status().openagent.activeCalls === 2, { what: 'two calls' });
    const result = await oa.host.patchSettings({ openagent: { enabled: false } });
    expect(result.ok).toBe(true);
    await eventually(() => oa.bridge.connections[0]!.closed, { what: 'the close' });
    expect(oa.host.status().openagent).toMatchObject({ enabled: false, phase: 'disabled', activeCalls: 0, connected: false });
    expect(JSON.parse(readFileSync(join(oa.home, 'settings.json'), 'utf8')).openagent.enabled).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(oa.bridge.connections).toHaveLength(1);
    // on again: a new generation of the same instance
    await oa.host.patchSettings({ openagent: { enabled: true } });
    expect(await oa.bridge.hello(2)).toMatchObject({ generation: 2 });
  });

  it('sends a catalog update when consent changes, and an empty catalog offers nothing', async () => {
    await using oa = await startOpenAgentHost({ openagent: { servers: ['capnode'] } });
    await oa.bridge.hello(1);
    await oa.host.patchSettings({ consent: { screen: 'allow' } });
    const update = await eventually(() => oa.bridge.framesOf('capability_catalog_update').at(-1), { what: 'a catalog update' });
    expect(update.generation).toBe(1);
    const tools = (update.servers as { tools: { name: string }[] }[])[0]!.tools.map((tool) => tool.name);
    expect(tools).toContain('oa.screen');
    await oa.host.patchSettings({ openagent: { servers: [] } });
    const hello = await oa.bridge.hello(2);
    expect(hello.servers).toEqual([]);
  });

  it('stays off by default: no connection, phase disabled', async () => {
    await using oa = await startOpenAgentHost({ openagent: { enabled: false } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(oa.bridge.connections).toHaveLength(0);
    expect(oa.host.status().openagent).toMatchObject({ enabled: false, phase: 'disabled', catalog: { servers: 0, tools: 0 } });
  });
});
