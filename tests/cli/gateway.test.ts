import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY_NODE_IDENTITY_FILE, loadOrCreateDeviceIdentity } from '@capnode/gateway-bridge/node';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
// The real gateway has no chat channels offline, so channel messages come from the bridge's own fake
// gateway here; the nine tools run against the real gateway in tests/gateway/cli.interop.ts.
import { startFakeGateway, type FakeConnection } from '../../packages/gateway-bridge/src/internal/fakeGateway.js';
import { cliPath, completion, runCli, spawnCli, startServe, slowPoll, tempHome } from './helpers.js';
import { eventually } from '../support/poll.js';
import { freePort } from '../support/net.js';

const SECRET = 'gateway-secret-token-never-printed-42';

async function waitForOutput(read: () => string, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  return eventually(async () => pattern.exec(read()) ?? undefined, slowPoll(`output matching ${pattern}`, timeoutMs));
}

describe('capnode serve: node mode × MCP server', () => {
  it('MCP on + node on (unreachable gateway): MCP listens, the node is not connected and says why; the token is never printed', async () => {
    using home = tempHome();
    const gatewayUrl = `ws://127.0.0.1:${await freePort()}`;
    await using serve = await startServe(home.home, ['--port', '0', '--gateway', gatewayUrl, '--gateway-token', SECRET]);
    expect(serve.stdout()).toContain(`gateway node:   ${gatewayUrl}`);
    expect(serve.stdout()).toMatch(/capnode ready: MCP on http:\/\/127\.0\.0\.1:\d+\//);

    const status = await eventually(async () => {
      const result = await runCli(['gateway', 'status', '--json'], home.home);
      const parsed = JSON.parse(result.stdout) as { running: boolean; node: { state: string; lastError?: { message: string } } };
      return parsed.node?.lastError ? parsed : undefined;
    }, slowPoll('a connect error in gateway status'));
    expect(status.running).toBe(true);
    expect(['connecting', 'waiting']).toContain(status.node.state);

    const appStatus = await runCli(['status', '--json'], home.home);
    const reported = JSON.parse(appStatus.stdout) as { mcp: { state: string }; node: { state: string; url: string } };
    expect(reported.mcp.state).toBe('listening');
    expect(reported.node.url).toBe(gatewayUrl);
    expect(reported.node.state).not.toBe('connected');

    const human = await runCli(['gateway', 'status'], home.home);
    expect(human.stdout).toMatch(/gateway node \(host pid \d+\): (connecting|waiting)/);
    for (const text of [serve.stdout(), serve.stderr(), appStatus.stdout, human.stdout]) expect(text).not.toContain(SECRET);
  });

  it('MCP off + node on: runs only the gateway node; approvals and gateway status still reach it', async () => {
    using home = tempHome();
    const gatewayUrl = `ws://127.0.0.1:${await freePort()}`;
    writeFileSync(join(home.home, 'settings.json'), JSON.stringify({ mcp: { enabled: false }, gateway: { enabled: true, url: gatewayUrl } }));
    const child = spawnCli(['serve'], home.home, { CAPNODE_GATEWAY_TOKEN: SECRET });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitForOutput(() => out, /capnode ready: gateway node for ws:\/\/127\.0\.0\.1:\d+ \(MCP server off\)/);
      expect(out).toContain('MCP server:     off');
      expect(existsSync(join(home.home, 'host.json'))).toBe(false);
      const status = JSON.parse((await runCli(['gateway', 'status', '--json'], home.home)).stdout) as { running: boolean; node: { state: string; url: string } };
      expect(status).toMatchObject({ running: true, node: { url: gatewayUrl } });
      expect(['connecting', 'waiting']).toContain(status.node.state);
      const approvals = await runCli(['approvals', 'list'], home.home);
      expect(approvals.code).toBe(0);
      expect(`${out}${err}`).not.toContain(SECRET);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    expect(readdirRun(home.home)).toEqual([]);
  });

  it('MCP off + node off: explains that nothing is enabled', async () => {
    using home = tempHome();
    writeFileSync(join(home.home, 'settings.json'), JSON.stringify({ mcp: { enabled: false } }));
    const result = await runCli(['serve'], home.home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nothing to serve: the MCP server is off');
    expect(result.stderr).toContain('capnode serve --gateway ws://');
  });

  it('rejects a gateway URL that is not ws/wss, and --gateway on plain capnode mcp', async () => {
    using home = tempHome();
    const bad = await runCli(['serve', '--gateway', 'http://127.0.0.1:1'], home.home);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--gateway must be a ws:// or wss:// URL');
    const mcp = await runCli(['mcp', '--gateway', 'ws://127.0.0.1:1'], home.home);
    expect(mcp.code).toBe(2);
  });

  it('gateway status offline shows config and identity without the token; pair without an identity says what to do', async () => {
    using home = tempHome();
    writeFileSync(join(home.home, 'settings.json'), JSON.stringify({ gateway: { enabled: true, url: 'ws://127.0.0.1:9', token: SECRET } }));
    const offline = await runCli(['gateway', 'status'], home.home);
    expect(offline.code).toBe(0);
    expect(offline.stdout).toContain('gateway node: no host running');
    expect(offline.stdout).toContain('token:        set (settings.json gateway.token)');
    expect(offline.stdout).toContain('none yet');
    expect(offline.stdout).not.toContain(SECRET);
    const pair = await runCli(['gateway', 'pair'], home.home);
    expect(pair.code).toBe(1);
    expect(pair.stderr).toContain('no node identity yet');
    expect(pair.stderr).toContain('capnode serve --gateway ws://127.0.0.1:9');
  });

  it('gateway pair prints what it approved (--json as is), and Ctrl-C while the gateway is silent exits 130', async () => {
    using home = tempHome();
    const nodeId = loadOrCreateDeviceIdentity(join(home.home, GATEWAY_NODE_IDENTITY_FILE)).identity.deviceId;
    // The fake gateway only stands in for a gateway that never answers; the real approval runs in tests/gateway/cli.interop.ts.
    let answer = true;
    await using gateway = await startFakeGateway(async (connection) => {
      await connection.handshake();
      const list = await connection.next((frame) => frame.method === 'node.pair.list');
      if (!answer) return;
      connection.respond(list.id, { pending: [{ requestId: 'r-1', nodeId, commands: ['system.run', 'device.info'] }] });
      const approve = await connection.next((frame) => frame.method === 'node.pair.approve');
      connection.respond(approve.id, { ok: true });
      const nodes = await connection.next((frame) => frame.method === 'node.list');
      connection.respond(nodes.id, { nodes: [{ nodeId, approvalState: 'approved' }] });
    });
    const human = await runCli(['gateway', 'pair', '--gateway', gateway.url], home.home);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe(`approved request r-1 for node ${nodeId}: system.run, device.info\n`);
    const json = await runCli(['gateway', 'pair', '--gateway', gateway.url, '--json'], home.home);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ nodeId, approved: [{ requestId: 'r-1', commands: ['system.run', 'device.info'] }], node: { nodeId, approvalState: 'approved' } });

    answer = false;
    const child = spawnCli(['gateway', 'pair', '--gateway', gateway.url], home.home);
    child.stdin.end();
    const done = completion(child);
    const connection = await gateway.connection(2, 20_000);
    await connection.next((frame) => frame.method === 'node.pair.list', 20_000);
    child.kill('SIGINT');
    const interrupted = await done;
    expect(interrupted.code).toBe(130);
    expect(interrupted.stdout).toBe('');
  });
});

function readdirRun(home: string): string[] {
  try {
    return readdirSync(join(home, 'run'));
  } catch {
    return [];
  }
}

/** A fake gateway answering the operator handshake and sessions.subscribe. */
async function channelGateway() {
  const connections: FakeConnection[] = [];
  const gateway = await startFakeGateway(async (connection) => {
    await connection.handshake();
    const request = await connection.next((frame) => frame.method === 'sessions.subscribe');
    connection.respond(request.id, { subscribed: true });
    connections.push(connection);
  });
  return { gateway, connections };
}

function userMessage(connection: FakeConnection, text: string) {
  connection.send({
    type: 'event',
    event: 'session.message',
    payload: { sessionKey: 'agent:main:telegram:chat-1', lastChannel: 'telegram', lastTo: 'chat-1', messageId: 'm-1', message: { role: 'user', content: [{ type: 'text', text }] }, senderIsOwner: true },
  });
}

describe('capnode mcp channel over stdio (SDK v2 client)', () => {
  it('declares the claude/channel capabilities, lists the nine tools, relays channel messages and permission replies', async () => {
    using home = tempHome();
    const { gateway, connections } = await channelGateway();
    await using _gateway = gateway;
    const channelNotes: Array<Record<string, unknown>> = [];
    const permissionNotes: Array<Record<string, unknown>> = [];
    const client = new Client({ name: 'channel-test', version: '1.0.0' });
    client.setNotificationHandler('notifications/claude/channel', { params: z.record(z.string(), z.unknown()) }, (params) => void channelNotes.push(params));
    client.setNotificationHandler('notifications/claude/channel/permission', { params: z.record(z.string(), z.unknown()) }, (params) => void permissionNotes.push(params));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'mcp', 'channel', '--gateway', gateway.url],
      env: { ...(process.env as Record<string, string>), CAPNODE_HOME: home.home, CAPNODE_GATEWAY_TOKEN: SECRET },
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()?.experimental).toMatchObject({ 'claude/channel': {}, 'claude/channel/permission': {} });
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(tools).toEqual(['attachments_fetch', 'conversation_get', 'conversations_list', 'events_poll', 'events_wait', 'messages_read', 'messages_send', 'permissions_list_open', 'permissions_respond']);
      const connect = await eventually(async () => connections[0], slowPoll('the operator connection'));
      expect(connect.received.find((frame) => frame.method === 'connect')?.params).toMatchObject({ role: 'operator', auth: { token: SECRET } });

      userMessage(connect, 'hello from telegram');
      const note = await eventually(async () => channelNotes[0], slowPoll('notifications/claude/channel'));
      expect(note).toMatchObject({ content: 'hello from telegram', meta: { session_key: 'agent:main:telegram:chat-1', channel: 'telegram', to: 'chat-1', message_id: 'm-1' } });

      await client.notification({ method: 'notifications/claude/channel/permission_request', params: { request_id: 'abcde', tool_name: 'Bash', description: 'run ls', input_preview: 'ls' } });
      const polled = await eventually(async () => {
        const result = (await client.callTool({ name: 'events_poll', arguments: { after_cursor: 0 } })) as { structuredContent?: { events?: Array<{ type: string }> } };
        return result.structuredContent?.events?.some((event) => event.type === 'claude_permission_request') ? result : undefined;
      }, slowPoll('the permission request in the event queue'));
      expect(polled.structuredContent?.events?.length).toBe(2);

      userMessage(connect, 'yes abcde');
      const answer = await eventually(async () => permissionNotes[0], slowPoll('notifications/claude/channel/permission'));
      expect(answer).toEqual({ request_id: 'abcde', behavior: 'allow' });
    } finally {
      await client.close();
    }
    // The channel tools run through the host's pipeline: every call is in the config directory's audit.log.
    const audited = await eventually(() => {
      try {
        const records = readFileSync(join(home.home, 'audit.log'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
        return records.some((record) => String(record.command).includes('events_poll')) ? records : undefined;
      } catch {
        return undefined;
      }
    }, slowPoll('the channel calls in audit.log'));
    expect(audited.find((record) => String(record.command).includes('events_poll'))).toMatchObject({ transport: 'mcp-stdio', outcome: 'ok' });
  });
});
