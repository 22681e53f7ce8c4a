import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { defineCapability, defineCommand } from '@capnode/capabilities';
import type { GatewayClient, GatewayNode, GatewayNodePairingRequest } from '@capnode/gateway-bridge';
import { GATEWAY_NODE_IDENTITY_FILE, approveGatewayNodePairing, findGatewayNode } from '@capnode/gateway-bridge/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invokeNode, startNodeSession, type NodeFixture, type NodeSession } from './fixtures.js';
import { gatewayWait, interopSkipReason, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('capnode as a node of the real OpenClaw gateway', () => {
  let gateway: RealGateway;
  let fixture: NodeFixture;
  let node: GatewayNode;
  let operator: GatewayClient;
  let session: NodeSession | undefined;
  const pairingRequests: GatewayNodePairingRequest[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    session = await startNodeSession({
      client: { version: '0.1.0-interop', displayName: 'capnode-interop' },
      onPairingRequired: (request) => pairingRequests.push(request),
      onLog: (level, message) => logs.push(`${level} ${message}`),
    });
    ({ gateway, fixture, node, operator } = session);
  });

  afterAll(async () => {
    await session?.[Symbol.asyncDispose]();
  });

  it('connects as role node with its Ed25519 device identity, kept 0600 beside the settings', async () => {
    const file = join(fixture.home, GATEWAY_NODE_IDENTITY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { deviceId: string; deviceTokens: Record<string, { token: string }> };
    expect(stored.deviceId).toBe(node.nodeId);
    // hello-ok's device token is kept for later connects.
    expect(stored.deviceTokens[`node ${gateway.url}`]?.token).toMatch(/^[A-Za-z0-9_-]{20,}$/);

    const status = node.status();
    expect(status.connection).toMatchObject({ state: 'connected', role: 'node', deviceId: node.nodeId, server: { version: '2026.9.6' } });
    const entry = await findGatewayNode(operator, node.nodeId);
    expect(entry).toMatchObject({ nodeId: node.nodeId, connected: true, platform: 'linux', displayName: 'capnode-interop' });
  });

  it('declares the live registry without localOnly commands and surfaces the pairing request id', async () => {
    const entry = await findGatewayNode(operator, node.nodeId);
    expect(entry?.approvalState).toBe('pending-approval');
    const declared = entry?.pendingDeclaredCommands ?? [];
    expect(declared).toEqual(expect.arrayContaining(['device.info', 'system.run', 'interop.echo', 'interop.slow']));
    expect(declared).not.toContain('interop.local');
    expect(node.status().declared.commands).not.toContain('interop.local');
    // Caps are OpenClaw's families only; device, system and interop are none of them.
    expect(node.status().declared.caps).toEqual([]);

    const request = await eventually(() => pairingRequests.find((r) => r.kind === 'commands' && r.requestId), gatewayWait('the pairing request to be surfaced'));
    expect(request.requestId).toBe(entry?.pendingRequestId);
    expect(request.message).toContain(request.requestId);
    expect(node.status().pairing).toMatchObject({ state: 'commands-pending', requestId: entry?.pendingRequestId });
  });

  it('invoking before approval fails retryably at the gateway, without running anything', async () => {
    const before = fixture.audited.length;
    const result = await invokeNode(operator, node.nodeId, 'interop.echo', { value: 'early' }, { timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: false, code: 'UNAVAILABLE' });
    expect(fixture.audited.length).toBe(before);
  });

  it('an operator approves the pairing and the node learns it from node.pair.resolved', async () => {
    const approved = await approveGatewayNodePairing(operator, node.nodeId);
    expect(approved.map((r) => r.requestId)).toContain(pairingRequests.find((r) => r.kind === 'commands')?.requestId);
    await eventually(() => node.status().pairing.state === 'approved', gatewayWait('the node to see the approval'));
    const entry = await findGatewayNode(operator, node.nodeId);
    expect(entry).toMatchObject({ approvalState: 'approved' });
    expect(entry?.commands).toEqual(expect.arrayContaining(['device.info', 'system.run', 'interop.echo']));
  });

  it('node.invoke runs a capability end to end through the shared pipeline', async () => {
    const info = await invokeNode(operator, node.nodeId, 'device.info', {});
    expect(info).toMatchObject({ ok: true, payload: { ok: true, nodeId: node.nodeId, command: 'device.info', payload: { platform: 'linux' } } });

    const echo = await invokeNode(operator, node.nodeId, 'interop.echo', { value: 'hello gateway' });
    expect(echo).toMatchObject({ ok: true, payload: { payload: { echo: 'hello gateway' } } });
    const audit = fixture.audited.find((entry) => entry.request.command === 'interop.echo');
    expect(audit?.request).toMatchObject({ transport: 'gateway', caller: `gateway ${gateway.url}` });
    expect(audit?.request.requestId).toMatch(/.+/);

    // The pipeline's validation answers bad arguments; the gateway reports the node's error code.
    const bad = await invokeNode(operator, node.nodeId, 'interop.echo', { value: 42 });
    expect(bad).toMatchObject({ ok: false, message: expect.stringContaining('INVALID_ARGUMENTS') });
  });

  it('an invoke of a command the node did not declare (localOnly, case variants) runs nothing', async () => {
    const before = fixture.audited.length;
    const refusedBy: Record<string, string> = {};
    for (const command of ['interop.local', 'INTEROP.ECHO', 'Interop.Echo', 'System.Run', 'DEVICE.INFO']) {
      const seen = logs.length;
      const result = await invokeNode(operator, node.nodeId, command, {}, { timeoutMs: 10_000 });
      expect(result.ok, command).toBe(false);
      const byNode = logs.slice(seen).some((line) => line.includes('refused node.invoke.request') && line.includes(JSON.stringify(command)));
      if (byNode) expect(result.ok === false && result.message, command).toContain('is not declared by this node');
      refusedBy[command] = byNode ? 'node' : `gateway (${result.ok === false ? `${result.code}: ${result.message}` : ''})`;
    }
    console.info(`undeclared commands refused by: ${JSON.stringify(refusedBy)}`);
    expect(fixture.audited.length).toBe(before);
  });

  it('an invoke that needs exec approval waits for the user: allowed runs, denied comes back DENIED', async () => {
    const pending = invokeNode(operator, node.nodeId, 'system.run', { command: ['echo', 'approved by the user'] }, { timeoutMs: 60_000 });
    const approval = await eventually(() => fixture.broker.list()[0], gatewayWait('the exec approval request'));
    expect(approval).toMatchObject({ command: 'system.run', commandLine: 'echo "approved by the user"', transport: 'gateway' });
    fixture.broker.resolve(approval.id, 'allow-once');
    const allowed = await pending;
    expect(allowed).toMatchObject({ ok: true, payload: { payload: { exitCode: 0, stdout: 'approved by the user\n' } } });

    const second = invokeNode(operator, node.nodeId, 'system.run', { command: ['echo', 'never'] }, { timeoutMs: 60_000 });
    const request = await eventually(() => fixture.broker.list()[0], gatewayWait('the second exec approval request'));
    fixture.broker.resolve(request.id, 'deny');
    const denied = await second;
    expect(denied).toMatchObject({ ok: false, message: expect.stringContaining('DENIED') });
    expect(denied.ok === false && (denied.details as { nodeError?: { code?: string } }).nodeError?.code).toBe('DENIED');
  });

  it('runs at most 8 invokes at once; the ninth gets "node busy, retry"', async () => {
    const tags = Array.from({ length: 9 }, (_, i) => `busy-${i}`);
    const results = tags.map((tag) => invokeNode(operator, node.nodeId, 'interop.slow', { tag }, { timeoutMs: 60_000 }));
    await eventually(() => fixture.running() === 8, gatewayWait('8 invokes running'));
    const busy = await Promise.race([Promise.any(results.map(async (result) => {
      const settled = await result;
      if (settled.ok) throw new Error('not busy');
      return settled;
    })), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000))]);
    expect(busy).toMatchObject({ ok: false, message: expect.stringContaining('node busy, retry') });
    expect(fixture.running()).toBe(8);
    for (const tag of tags) fixture.gate(tag).open();
    const settled = await Promise.all(results);
    expect(settled.filter((r) => r.ok)).toHaveLength(8);
    expect(settled.filter((r) => !r.ok)).toHaveLength(1);
    expect(node.status().invocations.busy).toBeGreaterThanOrEqual(1);
  });

  it('a repeated idempotencyKey does not execute twice, while running or after completion', async () => {
    const key = randomUUID();
    const first = invokeNode(operator, node.nodeId, 'interop.slow', { tag: 'idem' }, { idempotencyKey: key, timeoutMs: 60_000 });
    await eventually(() => fixture.executions.get('idem') === 1, gatewayWait('the first call running'));
    const second = invokeNode(operator, node.nodeId, 'interop.slow', { tag: 'idem' }, { idempotencyKey: key, timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    fixture.gate('idem').open();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ ok: true, payload: { payload: { tag: 'idem', executions: 1 } } });
    expect(b).toMatchObject({ ok: true, payload: { payload: { tag: 'idem', executions: 1 } } });
    const again = await invokeNode(operator, node.nodeId, 'interop.slow', { tag: 'idem' }, { idempotencyKey: key });
    expect(again).toMatchObject({ ok: true, payload: { payload: { tag: 'idem', executions: 1 } } });
    expect(fixture.executions.get('idem')).toBe(1);
    // The gateway forwards every delivery; the node's ledger joined the second and replayed the third.
    expect(node.status().invocations).toMatchObject({ joined: 1, replayed: 1 });
  });

  it('honours timeoutMs: the gateway cancels and the command sees its signal aborted', async () => {
    const result = await invokeNode(operator, node.nodeId, 'interop.slow', { tag: 'timeout' }, { timeoutMs: 1_500 });
    expect(result.ok).toBe(false);
    await eventually(() => fixture.aborted.has('timeout'), gatewayWait('the command to be aborted', 15_000));
    expect(fixture.running()).toBe(0);
  });

  it('a registry change redeclares by reconnecting and surfaces the new approval request', async () => {
    const connIdBefore = node.status().connection.server?.connId;
    const seen = pairingRequests.length;
    fixture.registry.register(
      defineCapability({
        category: 'interop-added',
        commands: [defineCommand({ name: 'interop.added', description: 'Registered while connected.', execute: () => 'added later' })],
      }),
    );
    const request = await eventually(() =>
      pairingRequests.slice(seen).find((r) => r.kind === 'commands' && r.requestId && r.commands?.includes('interop.added')), gatewayWait('a pairing request for the new command'));
    expect(node.status().connection.server?.connId).not.toBe(connIdBefore);
    expect(node.status().declared.commands).toContain('interop.added');
    const approved = await approveGatewayNodePairing(operator, node.nodeId);
    expect(approved.map((r) => r.requestId)).toContain(request.requestId);
    const result = await invokeNode(operator, node.nodeId, 'interop.added', {});
    expect(result).toMatchObject({ ok: true, payload: { payload: { content: [{ type: 'text', text: 'added later' }] } } });
  });
});
