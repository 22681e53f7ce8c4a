import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PendingApproval } from '@capnode/capabilities';
import type { GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing } from '@capnode/gateway-bridge/node';
import { createHost, type Host } from '@capnode/host';
import { SKILL_NAME } from '@capnode/host/docs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingServer } from '../support/mcpServers.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';
import { connectOperator } from './fixtures.js';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { scriptedAgentConfig, startScriptedModel, type ScriptedModel } from './scriptedModel.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway node MCP interop skipped: ${skipReason}`);

const TOOL = 'everything__echo';
const MESSAGE = 'capnode node-hosted mcp 42';

/** settings.json of a stock host: gateway node on this gateway, server-everything imported and published. */
function writeHostSettings(home: string, gateway: RealGateway): void {
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(
    join(home, 'settings.json'),
    JSON.stringify({
      approvals: { wait: 'block' },
      gateway: { enabled: true, url: gateway.url, token: gateway.token, publishServers: ['everything'] },
      mcpClient: { reexport: true, servers: [everythingServer()] },
    }),
    { mode: 0o600 },
  );
}

/** The names of the tools an agent turn's first model request offered. */
function offeredTools(model: ScriptedModel, from: number): string[] {
  const request = model.requests.slice(from).find((entry) => (entry.body.tools ?? []).length > 0);
  return (request?.body.tools ?? []).map((tool) => tool.function?.name ?? '');
}

async function agentTurn(operator: GatewayClient, message: string): Promise<Record<string, unknown>> {
  const accepted = (await operator.request('agent', { message, agentId: 'main', idempotencyKey: randomUUID() }, { timeoutMs: 30_000 })) as { runId?: string };
  expect(accepted, JSON.stringify(accepted)).toMatchObject({ runId: expect.any(String) });
  return (await operator.request('agent.wait', { runId: accepted.runId, timeoutMs: 90_000 }, { timeoutMs: 95_000 })) as Record<string, unknown>;
}

/** The gateway's skill snapshot for the main agent, as JSON text. */
async function skillSnapshot(operator: GatewayClient): Promise<string> {
  return JSON.stringify(await operator.request('skills.status', { agentId: 'main' }, { timeoutMs: 30_000 }));
}

describe.skipIf(skipReason !== undefined)('node-hosted MCP tools and the capnode skill through the real OpenClaw gateway', () => {
  let gateway: RealGateway;
  let model: ScriptedModel;
  let host: Host;
  let operator: GatewayClient;
  let nodeId: string;
  const dir = tempDir('capnode-node-mcp-interop-');
  const home = join(dir.path, 'home');
  const logs: string[] = [];
  const asked: PendingApproval[] = [];

  beforeAll(async () => {
    model = await startScriptedModel();
    // Tool search off: the scripted model sees every tool in its request (by default OpenClaw catalogs
    // node-hosted tools behind its tool-search surface, where a real model finds them by searching).
    const config = scriptedAgentConfig(model.baseUrl);
    gateway = await startGateway({ config: { ...config, tools: { ...(config.tools as Record<string, unknown>), toolSearch: false } } });
    writeHostSettings(home, gateway);
    host = createHost({ home, port: 0, logFile: false, onLog: (level, message) => logs.push(`${level} ${message}`) });
    host.approvals.subscribe((event) => {
      if (event.type !== 'requested') return;
      asked.push(event.approval);
      queueMicrotask(() => host.approvals.resolve(event.approval.id, 'allow-once'));
    });
    await host.start();
    await host.importsReady();
    nodeId = await eventually(() => (host.status().node.state === 'connected' ? host.status().node.nodeId : undefined), gatewayWait('the gateway node to connect', 60_000));
    operator = await connectOperator(gateway.url, gateway.token, home);
    await eventually(async () => (await approveGatewayNodePairing(operator, nodeId)).length > 0, gatewayWait('the pairing request'));
    await eventually(() => host.status().node.pairing?.state === 'approved', gatewayWait('the approval to reach the node'));
  });

  afterAll(async () => {
    if (process.env.NODE_MCP_INTEROP_DEBUG) console.info(logs.join('\n'));
    await operator?.close();
    await host?.close();
    await gateway?.[Symbol.asyncDispose]();
    await model?.close();
    dir[Symbol.dispose]();
  });

  it('an agent turn calls a server-everything tool through the node-hosted MCP tools and gets its result, through the pipeline', async () => {
    model.setScript((request) => ((request.body.tools ?? []).some((tool) => tool.function?.name === TOOL) ? { id: 'callcapnodemcp1', name: TOOL, arguments: { message: MESSAGE } } : undefined));
    const from = model.requests.length;
    const waited = await agentTurn(operator, 'Echo through the capnode node.');
    const diagnostics = () => `agent.wait: ${JSON.stringify(waited)}\noffered: ${offeredTools(model, from).join(', ')}\nhost log:\n${logs.slice(-30).join('\n')}\ngateway output:\n${gateway.output().slice(-3000)}`;
    expect(waited, diagnostics()).toMatchObject({ status: 'ok' });
    expect(offeredTools(model, from), diagnostics()).toContain(TOOL);
    const offered = model.requests.slice(from).flatMap((entry) => entry.body.tools ?? []).find((tool) => tool.function?.name === TOOL);
    expect(offered?.function?.parameters).toMatchObject({ properties: { message: expect.any(Object) } });

    const followUp = model.requests.slice(from).find((request) => (request.body.messages ?? []).some((message) => message.role === 'tool'));
    expect(followUp, diagnostics()).toBeDefined();
    const toolResult = followUp!.body.messages!.find((message) => message.role === 'tool')!;
    expect(toolResult.tool_call_id).toBe('callcapnodemcp1');
    expect(JSON.stringify(toolResult.content)).toContain(`Echo: ${MESSAGE}`);

    // Through the one pipeline: capnode's approval for the imported tool, asked for a gateway call, and audited.
    expect(asked.find((approval) => approval.command === TOOL), diagnostics()).toMatchObject({ summary: expect.stringContaining("tool 'echo' of MCP server 'everything'") });
    const audit = readFileSync(join(home, 'audit.log'), 'utf8').split('\n').filter((line) => line.includes(`"command":"${TOOL}"`));
    expect(audit.some((line) => line.includes('"transport":"gateway"')), audit.join('\n')).toBe(true);
  });

  it("the capnode skill is in the gateway's skill snapshot while the node is connected", async () => {
    const snapshot = await eventually(async () => {
      const text = await skillSnapshot(operator);
      return text.includes(`node://${encodeURIComponent(nodeId)}/skills/${SKILL_NAME}/SKILL.md`) ? text : undefined;
    }, gatewayWait('the node skill in skills.status'));
    expect(snapshot).toContain('openclaw-node');
  });

  it("a server dropped from gateway.publishServers leaves the gateway's catalog without re-pairing", async () => {
    const connectedAt = host.status().node.connectedAt;
    const result = await host.patchSettings({ gateway: { publishServers: [] } });
    expect(result).toMatchObject({ ok: true, applied: ['gateway.publishServers'] });
    model.setScript(() => undefined);
    await eventually(async () => {
      const from = model.requests.length;
      const waited = await agentTurn(operator, 'Which tools do you have?');
      expect(waited).toMatchObject({ status: 'ok' });
      const offered = offeredTools(model, from);
      return offered.length > 0 && !offered.includes(TOOL) ? true : undefined;
    }, gatewayWait('the tool to leave the agent catalog', 60_000));
    // Same connection, still approved: no reconnect, no new pairing.
    expect(host.status().node).toMatchObject({ state: 'connected', connectedAt, pairing: { state: 'approved' } });
  });

  it('the skill leaves the snapshot with the node', async () => {
    await host.patchSettings({ gateway: { enabled: false } });
    await eventually(async () => ((await skillSnapshot(operator)).includes(`/skills/${SKILL_NAME}/SKILL.md`) ? undefined : true), gatewayWait('the node skill to leave skills.status'));
  });
});
