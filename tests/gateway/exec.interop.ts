import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { ApprovalDecision, PendingApproval } from '@capnode/capabilities';
import type { GatewayClient, GatewayNode } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing } from '@capnode/gateway-bridge/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invokeNode, startNodeSession, type NodeFixture, type NodeSession } from './fixtures.js';
import { gatewayWait, interopSkipReason, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';
import { completion, type ProcessResult } from '../support/process.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);

/**
 * OpenClaw's agent exec path (`exec host=node`) runs inside a model-driven agent turn; agentExec.interop.ts
 * drives one with a scripted model. The gateway's `tools.invoke` RPC cannot stand in for it: it builds tools
 * on its `http` surface, where the shell tools (`exec`) are never constructed even with
 * `gateway.tools.allow: ["exec"]` ("Tool not available: exec", seen on 2026.9.6). So these tests replay the
 * exact `node.invoke` requests its exec tool builds (openclaw@2026.9.6 dist/bash-tools:
 * `prepareNodeSystemRun`, `buildNodeSystemRunInvoke`) to reach the cases an agent turn cannot choose, and
 * check the reply the way its result formatter reads it (`payload.success`).
 */
function agentPrepareParams(nodeId: string, shellCommand: string, workdir: string | undefined) {
  return {
    nodeId,
    command: 'system.run.prepare',
    params: {
      command: ['/bin/sh', '-lc', shellCommand],
      security: 'allowlist',
      ask: 'on-miss',
      rawCommand: shellCommand,
      ...(workdir != null ? { cwd: workdir } : {}),
      agentId: 'main',
      sessionKey: 'agent:main:main',
    },
    timeoutMs: 15_000,
    idempotencyKey: randomUUID(),
  };
}

interface PreparedPlan {
  readonly argv: string[];
  readonly cwd?: string;
  readonly commandText: string;
  readonly agentId?: string;
  readonly sessionKey?: string;
}

function agentRunParams(nodeId: string, plan: PreparedPlan, extra: Record<string, unknown> = {}) {
  return {
    nodeId,
    command: 'system.run',
    timeoutMs: 60_000,
    params: {
      command: plan.argv,
      rawCommand: plan.commandText,
      systemRunPlan: plan,
      ...(plan.cwd != null ? { cwd: plan.cwd } : {}),
      timeoutMs: 30_000,
      agentId: plan.agentId,
      sessionKey: plan.sessionKey,
      runId: randomUUID(),
      ...extra,
    },
    idempotencyKey: randomUUID(),
  };
}

function runOpenclaw(gateway: RealGateway, args: readonly string[]): Promise<ProcessResult> {
  const child = spawn(gateway.openclaw.node, [gateway.openclaw.entry, ...args, '--url', gateway.url, '--token', gateway.token], { env: { ...gateway.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return completion(child);
}

describe.skipIf(skipReason !== undefined)('exec through the real gateway as OpenClaw agents use it', () => {
  let gateway: RealGateway;
  let fixture: NodeFixture;
  let node: GatewayNode;
  let operator: GatewayClient;
  let session: NodeSession | undefined;
  /** `node.invoke.request` params as the node received them, by command. */
  const received: Array<{ command: string; params: Record<string, unknown>; idempotencyKey?: string }> = [];
  const asked: PendingApproval[] = [];
  const logs: string[] = [];
  let answer: ApprovalDecision = 'allow-once';

  beforeAll(async () => {
    // Default backoff: the 1012 test relies on the restart path, not on short test backoffs.
    session = await startNodeSession({ client: { version: '0.1.0-interop', displayName: 'capnode-exec' }, onLog: (level, message) => logs.push(`${level} ${message}`) });
    ({ gateway, fixture, node, operator } = session);
    node.client.subscribe((event) => {
      if (event.event !== 'node.invoke.request') return;
      const payload = event.payload as { command: string; paramsJSON?: string; idempotencyKey?: string };
      received.push({ command: payload.command, params: JSON.parse(payload.paramsJSON ?? '{}') as Record<string, unknown>, ...(payload.idempotencyKey ? { idempotencyKey: payload.idempotencyKey } : {}) });
    });
    fixture.broker.subscribe((event) => {
      if (event.type !== 'requested') return;
      asked.push(event.approval);
      queueMicrotask(() => fixture.broker.resolve(event.approval.id, answer));
    });
    await eventually(async () => (await approveGatewayNodePairing(operator, node.nodeId)).length > 0, gatewayWait('the pairing request'));
    await eventually(() => node.status().pairing.state === 'approved', gatewayWait('the approval to reach the node'));
  });

  afterAll(async () => {
    await session?.[Symbol.asyncDispose]();
  });

  it('system.run.prepare then system.run: runs the plan after this machine\'s approval, with success in the result', async () => {
    const prepare = agentPrepareParams(node.nodeId, 'echo capnode-$((6*7)); pwd', fixture.home);
    const prepared = await invokeNode(operator, node.nodeId, prepare.command, prepare.params, { idempotencyKey: prepare.idempotencyKey, timeoutMs: prepare.timeoutMs });
    expect(prepared).toMatchObject({ ok: true, payload: { payload: { plan: { argv: ['/bin/sh', '-lc', 'echo capnode-$((6*7)); pwd'], cwd: fixture.home }, execPolicy: { security: 'allowlist', ask: 'on-miss' } } } });
    const plan = (prepared as { payload: { payload: { plan: PreparedPlan } } }).payload.payload.plan;
    expect(asked).toHaveLength(0);

    const run = agentRunParams(node.nodeId, plan);
    const ran = await invokeNode(operator, node.nodeId, run.command, run.params, { idempotencyKey: run.idempotencyKey, timeoutMs: run.timeoutMs });
    expect(ran).toMatchObject({ ok: true, payload: { payload: { success: true, exitCode: 0, stdout: `capnode-42\n${fixture.home}\n` } } });
    // capnode's own approval was asked (mode ask), with the planned argv and cwd.
    expect(asked.at(-1)).toMatchObject({ command: 'system.run', argv: plan.argv, cwd: fixture.home, transport: 'gateway' });

    // What the gateway forwarded: its own pick of the agent's fields plus the runId; no approval fields without an approval record.
    const forwarded = received.filter((entry) => entry.command === 'system.run').at(-1)!;
    expect(Object.keys(forwarded.params).sort()).toEqual(['agentId', 'command', 'cwd', 'rawCommand', 'runId', 'sessionKey', 'systemRunPlan', 'timeoutMs']);
    expect(forwarded.params.runId).toBe(run.params.runId);
  });

  it('a failing command is success: false; a denied one is refused; approved: true without a gateway approval record is refused by the gateway', async () => {
    answer = 'allow-once';
    const prepare = agentPrepareParams(node.nodeId, 'exit 3', undefined);
    const prepared = (await invokeNode(operator, node.nodeId, prepare.command, prepare.params)) as { ok: true; payload: { payload: { plan: PreparedPlan } } };
    expect(prepared.payload.payload.plan).not.toHaveProperty('cwd');
    const failed = await invokeNode(operator, node.nodeId, 'system.run', agentRunParams(node.nodeId, prepared.payload.payload.plan).params);
    expect(failed).toMatchObject({ ok: true, payload: { payload: { success: false, exitCode: 3 } } });

    answer = 'deny';
    const denied = await invokeNode(operator, node.nodeId, 'system.run', agentRunParams(node.nodeId, prepared.payload.payload.plan).params);
    expect(denied).toMatchObject({ ok: false });
    console.log(`gateway interop: a denied run is reported as ${JSON.stringify(denied)}`);
    answer = 'allow-once';

    const forged = await invokeNode(operator, node.nodeId, 'system.run', agentRunParams(node.nodeId, prepared.payload.payload.plan, { approved: true, approvalDecision: 'allow-always' }).params);
    expect(forged).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
  });

  it('exec approvals through the gateway\'s own route: exec.approvals.node.get and openclaw approvals allowlist add --node, in the snapshot shape, approved locally', async () => {
    const refused = await invokeNode(operator, node.nodeId, 'system.execApprovals.get', {});
    expect(refused).toMatchObject({ ok: false, code: 'INVALID_REQUEST', message: expect.stringContaining('exec.approvals.node') });

    const snapshot = (await operator.request('exec.approvals.node.get', { nodeId: node.nodeId })) as { hash: string; file: Record<string, any> };
    expect(snapshot).toMatchObject({ exists: true, hash: expect.any(String), file: { version: 1, defaults: { security: 'allowlist', ask: 'on-miss', askFallback: 'deny' } } });
    expect(received.filter((entry) => entry.command === 'system.execApprovals.get').at(-1)?.params).toEqual({});

    const before = asked.length;
    answer = 'allow-once';
    const added = await runOpenclaw(gateway, ['approvals', 'allowlist', 'add', '--node', node.nodeId, '/usr/bin/uptime']);
    expect(added.code, `${added.stdout}${added.stderr}`).toBe(0);
    expect(asked.length).toBe(before + 1);
    expect(asked.at(-1)).toMatchObject({ command: 'system.execApprovals.set', transport: 'gateway' });
    expect(await fixture.store.get()).toMatchObject({ mode: 'ask', allowlist: ['/usr/bin/uptime *'] });
    const setParams = received.filter((entry) => entry.command === 'system.execApprovals.set').at(-1)!.params;
    expect(Object.keys(setParams).sort()).toEqual(['baseHash', 'file']);

    // The user refuses the next remote change: the gateway reports it, nothing changes.
    answer = 'deny';
    const current = (await operator.request('exec.approvals.node.get', { nodeId: node.nodeId })) as { hash: string };
    const set = operator.request('exec.approvals.node.set', { nodeId: node.nodeId, file: { version: 1, defaults: { security: 'full', ask: 'off' } }, baseHash: current.hash });
    await expect(set).rejects.toMatchObject({ code: 'request_failed' });
    expect(await fixture.store.get()).toMatchObject({ mode: 'ask' });
    answer = 'allow-once';
  });

  it('after a graceful gateway restart (close 1012) the node is back within about a second of the gateway', async () => {
    await gateway.stop();
    await eventually(() => node.status().connection.state !== 'connected', gatewayWait('the node to notice'));
    expect(logs.some((line) => line.includes('closed (1012'))).toBe(true);
    await gateway.start();
    const started = Date.now();
    await node.ready({ timeoutMs: 30_000 });
    const backAfterMs = Date.now() - started;
    // The node usually connects while the gateway is still starting (before it logs ready).
    console.log(`gateway interop: node back ${backAfterMs} ms after the restarted gateway logged ready`);
    expect(backAfterMs).toBeLessThan(2_000);
  });
});
