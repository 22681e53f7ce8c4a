import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHANNEL_TOOL_NAMES, type GatewayClient } from '@capnode/gateway-bridge';
import { GATEWAY_NODE_IDENTITY_FILE, findGatewayNode } from '@capnode/gateway-bridge/node';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectOperator, INTEROP_ALLOW, invokeNode } from './fixtures.js';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';
import { completion, type ProcessResult } from '../support/process.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);
const cli = fileURLToPath(new URL('../../apps/cli/dist/bin.js', import.meta.url));

function run(args: readonly string[], env: Record<string, string>): Promise<ProcessResult> {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return completion(child);
}

describe.skipIf(skipReason !== undefined)('the built capnode CLI against the real OpenClaw gateway', () => {
  let gateway: RealGateway;
  let home: string;
  let serve: ChildProcessWithoutNullStreams;
  let out = '';
  let err = '';
  let operator: GatewayClient;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing; build first: pnpm turbo run build --filter capnode... --filter @capnode/gateway-bridge...`);
    gateway = await startGateway({ allowCommands: INTEROP_ALLOW });
    home = mkdtempSync(join(tmpdir(), 'capnode-cli-gateway-'));
    env = { CAPNODE_HOME: home };
    // The one documented command (the token on the command line here; CAPNODE_GATEWAY_TOKEN works too).
    serve = spawn(process.execPath, [cli, 'serve', '--port', '0', '--gateway', gateway.url, '--gateway-token', gateway.token], { env: { ...process.env, ...env }, stdio: 'pipe' });
    serve.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    serve.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    await eventually(() => /capnode ready: MCP on /.test(out), gatewayWait('capnode serve to be ready', 60_000));
    operator = await connectOperator(gateway.url, gateway.token, home);
  });

  afterAll(async () => {
    await operator?.close();
    if (serve && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve.once('close', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
    if (home) rmSync(home, { recursive: true, force: true });
    await gateway?.[Symbol.asyncDispose]();
  });

  it('capnode serve --gateway: the node appears, `capnode gateway pair` approves it, and node.invoke of device.info succeeds', async () => {
    await eventually(() => /gateway: connected to ws:\/\/127\.0\.0\.1:\d+ as node /.test(err), gatewayWait('the node to connect', 60_000));
    const nodeId = (JSON.parse(readFileSync(join(home, GATEWAY_NODE_IDENTITY_FILE), 'utf8')) as { deviceId: string }).deviceId;
    const entry = await eventually(async () => {
      const found = await findGatewayNode(operator, nodeId);
      return found?.connected ? found : undefined;
    }, gatewayWait('the gateway to list the node'));
    expect(entry.platform).toBe('linux');
    const pending = await eventually(async () => {
      const status = JSON.parse((await run(['gateway', 'status', '--json'], env)).stdout) as { node: { state: string; pairing?: { state: string; requestId?: string } } };
      return status.node.pairing?.state === 'commands-pending' && status.node.pairing.requestId ? status.node : undefined;
    }, gatewayWait('the pairing request id in gateway status'));
    expect(pending.state).toBe('connected');
    expect(err).toContain(pending.pairing!.requestId!);
    expect(`${out}${err}`).not.toContain(gateway.token);

    const pair = await run(['gateway', 'pair'], { ...env, CAPNODE_GATEWAY_TOKEN: gateway.token });
    expect(pair.code, pair.stderr).toBe(0);
    expect(pair.stdout).toContain(`approved request ${pending.pairing!.requestId}`);

    await eventually(async () => {
      const status = JSON.parse((await run(['gateway', 'status', '--json'], env)).stdout) as { node: { pairing?: { state: string } } };
      return status.node.pairing?.state === 'approved';
    }, gatewayWait('the node to see the approval'));
    const info = await invokeNode(operator, nodeId, 'device.info', {});
    expect(info).toMatchObject({ ok: true, payload: { ok: true, nodeId, command: 'device.info', payload: { platform: 'linux' } } });

    // The local-only app.* tools are never declared: an invoke is refused (by the gateway or the node) and runs nothing.
    for (const command of ['app.status', 'app.settings.get', 'app.settings.set', 'app.connection.gateways']) {
      const refused = await invokeNode(operator, nodeId, command, {}, { timeoutMs: 10_000 });
      expect(refused.ok, command).toBe(false);
      expect(JSON.stringify(refused)).not.toContain(gateway.token);
    }

    const again = await run(['gateway', 'pair'], { ...env, CAPNODE_GATEWAY_TOKEN: gateway.token });
    expect(again.stdout).toContain('nothing to approve');
    const status = JSON.parse((await run(['status', '--json'], env)).stdout) as { mcp: { state: string }; node: { state: string; invocations: { started: number } } };
    expect(status.mcp.state).toBe('listening');
    expect(status.node.state).toBe('connected');
    expect(status.node.invocations.started).toBeGreaterThanOrEqual(1);
  });

  it('capnode mcp channel lists the nine tools and reads live gateway data', async () => {
    const client = new Client({ name: 'cli-channel-interop', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, 'mcp', 'channel', '--gateway', gateway.url],
        env: { ...(process.env as Record<string, string>), ...env, CAPNODE_GATEWAY_TOKEN: gateway.token },
        stderr: 'pipe',
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(names).toEqual([...CHANNEL_TOOL_NAMES].sort());
      const conversations = (await client.callTool({ name: 'conversations_list', arguments: { limit: 5 } })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(conversations.isError).toBeFalsy();
      expect(Array.isArray(conversations.structuredContent?.conversations)).toBe(true);
      const approvals = (await client.callTool({ name: 'permissions_list_open', arguments: {} })) as { isError?: boolean };
      expect(approvals.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
