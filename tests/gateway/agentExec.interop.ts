import { randomUUID } from 'node:crypto';
import type { PendingApproval } from '@capnode/capabilities';
import { createGatewayClient, type GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing, createWsSocketFactory, gatewayPlatform, loadOrCreateDeviceIdentity } from '@capnode/gateway-bridge/node';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeSession, type NodeSession } from './fixtures.js';
import { gatewayWait, interopSkipReason } from './harness.js';
import { eventually } from '../support/poll.js';
import { scriptedAgentConfig, startScriptedModel, type ScriptedModel, type ScriptStep } from './scriptedModel.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);

const SHELL_COMMAND = 'echo capnode-agent-$((6*7))';

/**
 * The script: the first request that offers the `exec` tool gets a tool call running
 * {@link SHELL_COMMAND} on the given gateway node (once); everything else gets the final text.
 */
function execOnce(nodeId: string): ScriptStep {
  let toolCallSent = false;
  return (request) => {
    if (toolCallSent || !(request.body.tools ?? []).some((tool) => tool.function?.name === 'exec')) return undefined;
    toolCallSent = true;
    return { id: 'callcapnode1', name: 'exec', arguments: { command: SHELL_COMMAND, host: 'node', node: nodeId } };
  };
}

/**
 * An operator that declares the `exec-approvals` cap, so the gateway has a route for its own exec
 * approval: without one, the agent's exec on this gateway node fails after `system.run.prepare` and
 * `system.execApprovals.get` with "exec denied: Headless runs cannot wait for interactive exec
 * approval" (openclaw@2026.9.6, capnode in mode `ask`). It allows every `exec.approval.requested`
 * once and records what it was shown.
 */
async function connectExecApprover(url: string, token: string, home: string, seen: unknown[]): Promise<GatewayClient> {
  const { identity, deviceTokens } = loadOrCreateDeviceIdentity(join(home, 'test-exec-approver.json'));
  let client!: GatewayClient;
  client = createGatewayClient({
    url,
    token,
    role: 'operator',
    scopes: ['operator.read', 'operator.approvals', 'operator.admin'],
    client: { id: 'cli', mode: 'cli', version: '0.1.0-interop', platform: gatewayPlatform().platform, displayName: 'capnode exec approver' },
    declaration: () => ({ caps: ['exec-approvals'], commands: [] }),
    identity,
    deviceTokens,
    createSocket: createWsSocketFactory(),
    onEvent: (event) => {
      if (event.event !== 'exec.approval.requested') return;
      seen.push(event.payload);
      const id = (event.payload as { id: string }).id;
      void client.request('exec.approval.resolve', { id, decision: 'allow-once' }).catch((error: unknown) => seen.push({ resolveFailed: String(error) }));
    },
  });
  try {
    await client.ready({ timeoutMs: 15_000 });
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
}

describe.skipIf(skipReason !== undefined)("OpenClaw's own agent exec path (exec host=node) on a capnode gateway node", () => {
  let model: ScriptedModel | undefined;
  let session: NodeSession | undefined;
  const received: Array<{ command: string; params: Record<string, unknown> }> = [];
  const asked: PendingApproval[] = [];
  const gatewayApprovals: unknown[] = [];
  let approver: GatewayClient | undefined;

  beforeAll(async () => {
    model = await startScriptedModel();
    session = await startNodeSession({ client: { version: '0.1.0-interop', displayName: 'capnode-agent-exec' } }, scriptedAgentConfig(model.baseUrl));
    const { node, operator, fixture } = session;
    model.setScript(execOnce(node.nodeId));
    node.client.subscribe((event) => {
      if (event.event !== 'node.invoke.request') return;
      const payload = event.payload as { command: string; paramsJSON?: string };
      received.push({ command: payload.command, params: JSON.parse(payload.paramsJSON ?? '{}') as Record<string, unknown> });
    });
    fixture.broker.subscribe((event) => {
      if (event.type !== 'requested') return;
      asked.push(event.approval);
      queueMicrotask(() => fixture.broker.resolve(event.approval.id, 'allow-once'));
    });
    await eventually(async () => (await approveGatewayNodePairing(operator, node.nodeId)).length > 0, gatewayWait('the pairing request'));
    await eventually(() => node.status().pairing.state === 'approved', gatewayWait('the approval to reach the node'));
    approver = await connectExecApprover(session.gateway.url, session.gateway.token, fixture.home, gatewayApprovals);
  });

  afterAll(async () => {
    await approver?.close();
    await session?.[Symbol.asyncDispose]();
    await model?.close();
  });

  it('an agent turn driven by a scripted model runs exec on the node: prepare, capnode approval, run, and the tool result reaches the model', async () => {
    const { node, operator, gateway } = session!;
    const accepted = (await operator.request('agent', { message: 'Run the capnode check on the gateway node.', agentId: 'main', idempotencyKey: randomUUID() }, { timeoutMs: 30_000 })) as { runId?: string; status?: string };
    expect(accepted, JSON.stringify(accepted)).toMatchObject({ runId: expect.any(String) });
    const waited = (await operator.request('agent.wait', { runId: accepted.runId, timeoutMs: 45_000 }, { timeoutMs: 50_000 })) as Record<string, unknown>;
    const diagnostics = () => `agent.wait: ${JSON.stringify(waited)}\nmodel requests: ${model!.requests.length}\nnode received: ${JSON.stringify(received.map((entry) => entry.command))}\ngateway approvals: ${JSON.stringify(gatewayApprovals).slice(0, 1500)}\ngateway output:\n${gateway.output().slice(-3000)}`;
    expect(waited, diagnostics()).toMatchObject({ status: 'ok' });

    // The gateway node saw OpenClaw's two-step exec: the plan first, then the run of exactly that plan.
    const commands = received.map((entry) => entry.command).filter((command) => command.startsWith('system.run'));
    expect(commands, diagnostics()).toEqual(['system.run.prepare', 'system.run']);
    const prepare = received.find((entry) => entry.command === 'system.run.prepare')!;
    const run = received.find((entry) => entry.command === 'system.run')!;
    expect(prepare.params).toMatchObject({ command: ['/bin/sh', '-lc', SHELL_COMMAND] });
    const plan = run.params.systemRunPlan as { argv: string[] };
    expect(plan.argv).toEqual(['/bin/sh', '-lc', SHELL_COMMAND]);
    expect(run.params.command).toEqual(plan.argv);
    expect(plan).toMatchObject({ agentId: 'main', sessionKey: 'agent:main:main' });

    // OpenClaw's own approval first (delivered to the approval client, which allowed once); the run carries that decision.
    expect(gatewayApprovals).toHaveLength(1);
    expect(gatewayApprovals[0]).toMatchObject({ approvalKind: 'exec', request: { host: 'node', nodeId: node.nodeId, systemRunPlan: { argv: plan.argv }, toolCallId: 'callcapnode1' } });
    expect(run.params).toMatchObject({ approved: true, approvalDecision: 'allow-once', runId: expect.any(String) });

    // capnode's own approval was asked for that argv, and answered allow.
    expect(asked.filter((approval) => approval.command === 'system.run')).toHaveLength(1);
    expect(asked[0]).toMatchObject({ command: 'system.run', argv: plan.argv, transport: 'gateway' });
    expect(node.status().connection.state).toBe('connected');

    // The model's follow-up request carries the tool result with the command's output.
    const followUp = model!.requests.find((request) => (request.body.messages ?? []).some((message) => message.role === 'tool'));
    expect(followUp, diagnostics()).toBeDefined();
    const toolResult = followUp!.body.messages!.find((message) => message.role === 'tool')!;
    expect(toolResult.tool_call_id).toBe('callcapnode1');
    expect(JSON.stringify(toolResult.content)).toContain('capnode-agent-42');
    expect(toolResult.content).toEqual(expect.stringContaining(`Node: ${node.nodeId}`));
    // The model saw the command's output only after both approvals: one request, one follow-up.
    expect(model!.requests).toHaveLength(2);
  });
});
