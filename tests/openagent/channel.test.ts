import { describe, expect, it } from 'vitest';
import { openAgentArgumentsSha256 } from '@capnode/protocol/node';
import { startOpenAgentHost } from '../support/openAgentHost.js';
import { eventually } from '../support/poll.js';

describe('OpenAgent channel: registration and catalog', () => {
  it('sends capability_hello first with the catalog, headers on the handshake, and reports connected', async () => {
    await using oa = await startOpenAgentHost({ openagent: { headers: { Authorization: 'Bearer secret-token-123' }, deviceLabel: 'test-box', networkId: 'net-1' }, bridge: { networkId: 'net-1' } });
    const hello = await oa.bridge.hello(1);
    expect(oa.bridge.frames[0]!.frame.type).toBe('capability_hello');
    expect(hello).toMatchObject({ protocol: 'client-capabilities/1', generation: 1, device_label: 'test-box', network_id: 'net-1' });
    expect(hello.client_instance_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(oa.bridge.connections[0]!.headers.authorization).toBe('Bearer secret-token-123');
    const servers = hello.servers as { name: string; tools: { name: string; classification: string; input_schema: unknown }[] }[];
    expect(servers.map((server) => server.name)).toEqual(['capnode']);
    const tools = new Map(servers[0]!.tools.map((tool) => [tool.name, tool]));
    expect(tools.get('oa.echo')).toMatchObject({ classification: 'read_only', input_schema: { type: 'object' } });
    expect(tools.get('oa.append')?.classification).toBe('mutating');
    expect(tools.has('oa.screen')).toBe(false); // screen consent is off
    const status = await eventually(() => (oa.host.status().openagent.phase === 'connected' ? oa.host.status().openagent : undefined), { what: 'connected' });
    expect(status).toMatchObject({ enabled: true, connected: true, generation: 1, clientInstanceId: hello.client_instance_id, activeCalls: 0 });
    expect(JSON.stringify(oa.host.status())).not.toContain('secret-token-123');
    expect(oa.logs.join('\n')).not.toContain('secret-token-123');
  });

  it('answers a call with a correct hash and refuses a wrong one with arguments_hash_mismatch', async () => {
    await using oa = await startOpenAgentHost();
    const good = await oa.bridge.call('oa.echo', { text: 'hi' });
    const result = await oa.bridge.result(good.call_id as string);
    expect(result).toMatchObject({ generation: 1, result: { content: [{ type: 'text', text: 'hi' }] } });
    expect(result.error).toBeUndefined();
    const bad = await oa.bridge.call('oa.echo', { text: 'hi' }, { arguments_sha256: openAgentArgumentsSha256({ text: 'other' }) });
    expect(await oa.bridge.result(bad.call_id as string)).toMatchObject({ error: { code: 'arguments_hash_mismatch', data: { expected: bad.arguments_sha256, actual: openAgentArgumentsSha256({ text: 'hi' }) } } });
    const unknown = await oa.bridge.call('oa.nope', {});
    expect(await oa.bridge.result(unknown.call_id as string)).toMatchObject({ error: { code: 'tool_not_found' } });
    const consentOff = await oa.bridge.call('oa.screen', {});
    expect(await oa.bridge.result(consentOff.call_id as string)).toMatchObject({ error: { code: 'consent_required' } });
  });

  it('refuses stale generation, network mismatch and duplicate calls; account mismatch closes with 1008', async () => {
    await using oa = await startOpenAgentHost();
    const stale = await oa.bridge.call('oa.echo', { text: 'x' }, { generation: 2 });
    expect(await oa.bridge.result(stale.call_id as string)).toMatchObject({ error: { code: 'stale_generation' } });
    const network = await oa.bridge.call('oa.echo', { text: 'x' }, { network_id: 'elsewhere' });
    expect(await oa.bridge.result(network.call_id as string)).toMatchObject({ error: { code: 'network_mismatch' } });
    const slow = await oa.bridge.call('oa.wait', { ms: 60_000 });
    await eventually(() => oa.host.status().openagent.activeCalls === 1, { what: 'the call running' });
    oa.bridge.send({ ...slow });
    expect(await oa.bridge.result(slow.call_id as string)).toMatchObject({ error: { code: 'duplicate_call' } });
    const other = await oa.bridge.call('oa.echo', { text: 'x' }, { account_id: 'someone-else' });
    expect(await oa.bridge.result(other.call_id as string)).toMatchObject({ error: { code: 'account_mismatch' } });
    await eventually(() => oa.bridge.connections[0]!.closed, { what: 'the close' });
    expect(oa.bridge.connections[0]!.closed!.code).toBe(1008);
  });

  it('answers the 33rd concurrent call with client_backpressure', async () => {
    await using oa = await startOpenAgentHost();
    const calls = [];
    for (let index = 0; index < 32; index += 1) calls.push(await oa.bridge.call('oa.wait', { ms: 60_000 }));
    await eventually(() => oa.host.status().openagent.activeCalls === 32, { what: '32 calls running' });
    expect(oa.host.status().openagent.phase).toBe('active');
    const extra = await oa.bridge.call('oa.echo', { text: 'x' });
    expect(await oa.bridge.result(extra.call_id as string)).toMatchObject({ error: { code: 'client_backpressure' } });
    for (const call of calls) oa.bridge.send({ type: 'client_tool_cancel', call_id: call.call_id, generation: 1, reason: 'server_cancelled' });
    const results = await Promise.all(calls.map((call) => oa.bridge.result(call.call_id as string)));
    expect(results.every((result) => (result.error as { code?: string } | undefined)?.code === 'cancelled')).toBe(true);
  });
});
