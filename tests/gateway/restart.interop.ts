import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayClient, GatewayClientStatus, GatewayNode } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing } from '@capnode/gateway-bridge/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invokeNode, startNodeSession, type NodeFixture, type NodeSession } from './fixtures.js';
import { gatewayWait, interopSkipReason, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('gateway restart mid-session', () => {
  let gateway: RealGateway;
  let fixture: NodeFixture;
  let node: GatewayNode;
  let operator: GatewayClient;
  let session: NodeSession | undefined;
  const states: GatewayClientStatus['state'][] = [];

  beforeAll(async () => {
    session = await startNodeSession({
      // Quick first retries keep the test short; the defaults are 1 s doubling to 30 s.
      backoff: { initialMs: 500, maxMs: 2_000 },
      onStatus: (status) => {
        if (states.at(-1) !== status.connection.state) states.push(status.connection.state);
      },
    });
    ({ gateway, fixture, node, operator } = session);
    await eventually(async () => (await approveGatewayNodePairing(operator, node.nodeId)).length > 0, gatewayWait('the pairing request'));
    await eventually(() => node.status().pairing.state === 'approved', gatewayWait('the approval to reach the node'));
  });

  afterAll(async () => {
    await session?.[Symbol.asyncDispose]();
  });

  it('the node comes back by itself and a retried invoke is not executed twice (system.run too, despite the gateway\'s fresh runId)', async () => {
    const key = randomUUID();
    const connIdBefore = node.status().connection.server?.connId;
    const inFlight = invokeNode(operator, node.nodeId, 'interop.slow', { tag: 'restart' }, { idempotencyKey: key, timeoutMs: 90_000 });
    await eventually(() => fixture.executions.get('restart') === 1, gatewayWait('the invoke to run on the node'));
    // A system.run in flight too. The caller gives no runId: the gateway puts a fresh one into each dispatch.
    await fixture.store.set({ mode: 'full', allowlist: [] });
    const runKey = randomUUID();
    const runIds: unknown[] = [];
    node.client.subscribe((event) => {
      const payload = event.payload as { command?: string; paramsJSON?: string; idempotencyKey?: string };
      if (event.event === 'node.invoke.request' && payload.idempotencyKey === runKey) runIds.push((JSON.parse(payload.paramsJSON ?? '{}') as { runId?: unknown }).runId);
    });
    const marker = join(fixture.home, 'runs.txt');
    writeFileSync(marker, '');
    const runParams = { command: [process.execPath, '-e', `require('fs').appendFileSync(${JSON.stringify(marker)}, 'run\\n'); setTimeout(() => console.log('finished'), 2000)`], timeoutMs: 30_000 };
    const runInFlight = invokeNode(operator, node.nodeId, 'system.run', runParams, { idempotencyKey: runKey, timeoutMs: 90_000 });
    await eventually(() => readFileSync(marker, 'utf8') === 'run\n', gatewayWait('system.run to start on the node'));

    // A crash, not a graceful stop: a SIGTERM'd gateway drains in-flight invokes first.
    await gateway.stop({ crash: true });
    const lost = await inFlight;
    expect(lost.ok).toBe(false);
    expect((await runInFlight).ok).toBe(false);
    await eventually(() => node.status().connection.state !== 'connected', gatewayWait('the node to notice'));

    // The command finishes while the gateway is down; its result is kept for the idempotency key.
    fixture.gate('restart').open();
    await eventually(() => node.status().invocations.running === 0, gatewayWait('the run to finish'));

    await gateway.start();
    const hello = await node.ready({ timeoutMs: 60_000 }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- gateway output ---\n${gateway.output().slice(-3000)}`);
    });
    expect(hello.server.connId).not.toBe(connIdBefore);
    expect(states).toEqual(expect.arrayContaining(['connected', 'waiting', 'connecting']));
    expect(node.status().connection).toMatchObject({ state: 'connected', attempt: 0 });

    // The operator retries with the same idempotency key: the node answers from its ledger.
    const retried = await eventually(async () => {
      const result = await invokeNode(operator, node.nodeId, 'interop.slow', { tag: 'restart' }, { idempotencyKey: key, timeoutMs: 30_000 });
      return result.ok ? result : undefined;
    }, gatewayWait('the retried invoke to be accepted', 60_000));
    expect(retried).toMatchObject({ ok: true, payload: { payload: { tag: 'restart', executions: 1 } } });
    expect(fixture.executions.get('restart')).toBe(1);
    expect(node.status().invocations.replayed).toBeGreaterThanOrEqual(1);

    const rerun = await invokeNode(operator, node.nodeId, 'system.run', runParams, { idempotencyKey: runKey, timeoutMs: 30_000 });
    expect(rerun).toMatchObject({ ok: true, payload: { payload: { success: true, stdout: 'finished\n' } } });
    expect(readFileSync(marker, 'utf8')).toBe('run\n');
    expect(runIds.length).toBeGreaterThanOrEqual(2);
    expect(new Set(runIds).size).toBe(runIds.length);
    // A different command under the same key is still a conflict. Soon after a restart the gateway can
    // drop a node's answer (it then reports TIMEOUT; seen in CI); the node refuses every resend alike
    // and runs nothing, which its conflict count shows.
    const conflictsBefore = node.status().invocations.conflicts;
    const other = await eventually(async () => {
      const result = await invokeNode(operator, node.nodeId, 'system.run', { command: [process.execPath, '-e', '1'] }, { idempotencyKey: runKey, timeoutMs: 10_000 });
      return !result.ok && /TIMEOUT/.test(result.message ?? '') ? undefined : result;
    }, gatewayWait('the conflicting invoke to be answered', 60_000));
    expect(other).toMatchObject({ ok: false, message: expect.stringContaining('idempotencyKey') });
    expect(node.status().invocations.conflicts).toBeGreaterThan(conflictsBefore);

    // Still fully usable after the restart.
    const echo = await invokeNode(operator, node.nodeId, 'interop.echo', { value: 'after restart' });
    expect(echo).toMatchObject({ ok: true, payload: { payload: { echo: 'after restart' } } });
  });
});
