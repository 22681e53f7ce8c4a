import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PendingApproval } from '@capnode/capabilities';
import { createGatewayClient, type GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing, createWsSocketFactory, gatewayPlatform, loadOrCreateDeviceIdentity } from '@capnode/gateway-bridge/node';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeSession, type NodeSession } from './fixtures.js';
import { gatewayWait, interopSkipReason } from './harness.js';
import { eventually } from '../support/poll.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);

const SHELL_COMMAND = 'echo capnode-agent-$((6*7))';
const FINAL_TEXT = 'capnode scripted model: done';
const MODEL_ID = 'scripted-1';
const PROVIDER_ID = 'capnode-scripted';

/** One chat request the scripted model received, as OpenClaw's `openai-completions` adapter sent it. */
interface ChatRequest {
  readonly body: { messages?: Array<{ role: string; content?: unknown; tool_call_id?: string }>; tools?: Array<{ function?: { name?: string } }>; stream?: boolean };
}

/**
 * An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that plays a fixed script: the first
 * request that offers the `exec` tool gets a tool call running {@link SHELL_COMMAND} on the given
 * gateway node; any request carrying a tool result gets {@link FINAL_TEXT}. Streams when asked to.
 */
interface ScriptedModel {
  readonly baseUrl: string;
  readonly requests: ChatRequest[];
  setNode(nodeId: string): void;
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finishReason: string | null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-capnode', object: 'chat.completion.chunk', created: 0, model: MODEL_ID, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

function reply(response: ServerResponse, stream: boolean, message: { content?: string; toolCall?: { id: string; name: string; arguments: string } }): void {
  const toolCalls = message.toolCall ? [{ index: 0, id: message.toolCall.id, type: 'function', function: { name: message.toolCall.name, arguments: message.toolCall.arguments } }] : undefined;
  const finish = toolCalls ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 'chatcmpl-capnode', object: 'chat.completion', created: 0, model: MODEL_ID, choices: [{ index: 0, message: { role: 'assistant', content: message.content ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: finish }], usage }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(chunk({ role: 'assistant', ...(message.content ? { content: message.content } : {}), ...(toolCalls ? { tool_calls: toolCalls } : {}) }, null));
  response.write(`data: ${JSON.stringify({ id: 'chatcmpl-capnode', object: 'chat.completion.chunk', created: 0, model: MODEL_ID, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`);
  response.end('data: [DONE]\n\n');
}

async function startScriptedModel(): Promise<ScriptedModel> {
  const requests: ChatRequest[] = [];
  let nodeId = '';
  let toolCallSent = false;
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    let raw = '';
    for await (const part of request) raw += String(part);
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw || '{}') as ChatRequest['body'];
    requests.push({ body });
    const stream = body.stream === true;
    const hasToolResult = (body.messages ?? []).some((message) => message.role === 'tool');
    const offersExec = (body.tools ?? []).some((tool) => tool.function?.name === 'exec');
    if (!hasToolResult && offersExec && !toolCallSent) {
      toolCallSent = true;
      reply(response, stream, { toolCall: { id: 'callcapnode1', name: 'exec', arguments: JSON.stringify({ command: SHELL_COMMAND, host: 'node', node: nodeId }) } });
      return;
    }
    reply(response, stream, { content: FINAL_TEXT });
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    setNode: (id) => void (nodeId = id),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The gateway config that makes the scripted model the default agent's model and routes exec to a gateway node. */
function agentConfig(baseUrl: string): Record<string, unknown> {
  return {
    models: {
      mode: 'merge',
      providers: {
        [PROVIDER_ID]: {
          baseUrl,
          apiKey: 'capnode-scripted-key',
          api: 'openai-completions',
          models: [{ id: MODEL_ID, name: 'capnode scripted model', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128_000, maxTokens: 4_096 }],
        },
      },
    },
    agents: { defaults: { model: { primary: `${PROVIDER_ID}/${MODEL_ID}` } } },
    tools: { exec: { host: 'node' } },
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
    session = await startNodeSession({ client: { version: '0.1.0-interop', displayName: 'capnode-agent-exec' } }, agentConfig(model.baseUrl));
    const { node, operator, fixture } = session;
    model.setNode(node.nodeId);
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
