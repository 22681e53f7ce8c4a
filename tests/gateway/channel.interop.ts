import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInvoker, createRegistry, type Invoker } from '@capnode/capabilities';
import { CHANNEL_TOOL_NAMES, createChannelCapability, type ChannelBridge, type GatewayClient } from '@capnode/gateway-bridge';
import { OPERATOR_IDENTITY_FILE, connectGatewayOperator, createGatewayChannelBridge } from '@capnode/gateway-bridge/node';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);
const fixture = fileURLToPath(new URL('./fixtures/channelServer.mjs', import.meta.url));
const built = ['gateway-bridge', 'mcp-server', 'capabilities'].every((name) => existsSync(fileURLToPath(new URL(`../../packages/${name}/dist/index.js`, import.meta.url))));

interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

describe.skipIf(skipReason !== undefined)('channel bridge and channel MCP server against the real gateway', () => {
  let gateway: RealGateway;
  let home: string;

  beforeAll(async () => {
    gateway = await startGateway();
    home = mkdtempSync(join(tmpdir(), 'capnode-channel-'));
  });

  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await gateway?.[Symbol.asyncDispose]();
  });

  describe('in process', () => {
    let bridge: ChannelBridge;
    let invoker: Invoker;
    let requester: GatewayClient;

    beforeAll(async () => {
      const identityPath = join(home, OPERATOR_IDENTITY_FILE);
      bridge = createGatewayChannelBridge({ url: gateway.url, token: gateway.token, identityPath });
      invoker = createInvoker({ registry: createRegistry([createChannelCapability(bridge)]) });
      // Approvals are visible to the device that requested them (or to operator.admin): request from the same device.
      requester = await connectGatewayOperator({ url: gateway.url, token: gateway.token, identityPath, scopes: ['operator.read', 'operator.write', 'operator.approvals'] });
    });

    afterAll(async () => {
      await requester?.close();
      await bridge?.close();
    });

    const call = async (command: string, args: Record<string, unknown> = {}) => (await invoker.invoke({ command, args, transport: 'mcp-stdio' })).result;

    it('is ready once subscribed; list tools carry their data in the text as well as structured', async () => {
      await bridge.waitUntilReady({ timeoutMs: 30_000 });
      expect(bridge.isReady()).toBe(true);
      const listed = await call('conversations_list', { limit: 5 });
      expect(listed).toMatchObject({ ok: true, structured: { conversations: [] } });
      expect(listed.ok && listed.content[0]).toEqual({ type: 'text', text: 'conversations: 0\n\n{\n  "conversations": []\n}' });
      const missing = await call('conversation_get', { session_key: 'agent:main:nowhere' });
      expect(missing).toMatchObject({ ok: false, error: { message: 'conversation not found: agent:main:nowhere' } });
      expect(await call('messages_read', { session_key: 'agent:main:main' })).toMatchObject({ ok: true, structured: { messages: [] } });
    });

    it('an exec approval shows up in events_wait and permissions_list_open, and permissions_respond decides it', async () => {
      const { events, nextCursor } = bridge.pollEvents({ afterCursor: 0 });
      expect(events).toEqual([]);
      const waiting = call('events_wait', { after_cursor: nextCursor, timeout_ms: 30_000 });
      const decision = requester.request<{ id: string; decision: string | null }>(
        'exec.approval.request',
        { command: 'echo from-the-gateway', commandArgv: ['echo', 'from-the-gateway'], host: 'gateway', cwd: '/tmp' },
        { timeoutMs: 60_000 },
      );
      const woke = await waiting;
      expect(woke).toMatchObject({ ok: true, structured: { event: { type: 'exec_approval_requested', raw: { request: { command: 'echo from-the-gateway' } } } } });
      const id = ((woke.ok && woke.structured?.event) as { raw: { id: string } }).raw.id;
      expect(woke.ok && woke.content[0]?.type === 'text' && woke.content[0].text).toContain(id);

      const open = await call('permissions_list_open');
      expect(open).toMatchObject({ ok: true, structured: { approvals: [{ kind: 'exec', id, request: { command: 'echo from-the-gateway' } }] } });
      expect(open.ok && open.content[0]?.type === 'text' && open.content[0].text).toContain(id);

      expect(await call('permissions_respond', { kind: 'exec', id, decision: 'deny' })).toMatchObject({ ok: true, structured: { result: { ok: true } } });
      expect(await decision).toMatchObject({ id, decision: 'deny' });
      await eventually(() => bridge.pollEvents({ afterCursor: 0 }).events.some((event) => event.type === 'exec_approval_resolved'), gatewayWait('the resolved event'));
      expect(await call('permissions_list_open')).toMatchObject({ ok: true, structured: { approvals: [] } });
      const polled = await call('events_poll', { after_cursor: 0 });
      expect(polled).toMatchObject({ ok: true, structured: { next_cursor: 2, events: [{ cursor: 1, type: 'exec_approval_requested' }, { cursor: 2, type: 'exec_approval_resolved' }] } });
    });
  });

  describe.skipIf(!built)('side by side with `openclaw mcp serve` over MCP stdio', () => {
    const clients: Client[] = [];

    async function connect(name: string, command: string, args: string[], env: Record<string, string>): Promise<Client> {
      const client = new Client({ name, version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stderr: 'ignore' }));
      clients.push(client);
      return client;
    }

    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
    });

    it('exposes the same nine tools with the same arguments, and compatible results', async () => {
      const theirs = await connect('openclaw-side', gateway.openclaw.node, [gateway.openclaw.entry, 'mcp', 'serve', '--url', gateway.url, '--token', gateway.token], gateway.env);
      const ours = await connect('capnode-side', process.execPath, [fixture], {
        CAPNODE_GATEWAY_URL: gateway.url,
        CAPNODE_GATEWAY_TOKEN: gateway.token,
        CAPNODE_GATEWAY_IDENTITY: join(home, 'side-by-side', OPERATOR_IDENTITY_FILE),
      });
      const [theirTools, ourTools] = await Promise.all([theirs.listTools(), ours.listTools()]);
      const names = (tools: typeof theirTools) => tools.tools.map((tool) => tool.name).sort();
      expect(names(ourTools)).toEqual([...CHANNEL_TOOL_NAMES].sort());
      expect(names(ourTools)).toEqual(names(theirTools));
      for (const tool of theirTools.tools) {
        const mine = ourTools.tools.find((candidate) => candidate.name === tool.name)!;
        const properties = (schema: { properties?: Record<string, unknown> | undefined }) => Object.keys(schema.properties ?? {}).sort();
        expect(properties(mine.inputSchema), tool.name).toEqual(properties(tool.inputSchema));
        expect([...(mine.inputSchema.required ?? [])].sort(), tool.name).toEqual([...(tool.inputSchema.required ?? [])].sort());
      }

      const both = async (name: string, args: Record<string, unknown>) =>
        (await Promise.all([theirs.callTool({ name, arguments: args }), ours.callTool({ name, arguments: args })])) as [ToolResult, ToolResult];

      const [theirList, ourList] = await both('conversations_list', { limit: 5 });
      expect(ourList.structuredContent).toEqual(theirList.structuredContent);
      expect(ourList.content[0]?.text).toBe(theirList.content[0]?.text);

      const [theirPoll, ourPoll] = await both('events_poll', { after_cursor: 0 });
      expect(ourPoll.structuredContent).toEqual(theirPoll.structuredContent);
      // OpenClaw's text is only a count; ours carries the data too.
      expect(theirPoll.content[0]?.text).toBe('events: 0');
      expect(JSON.parse(ourPoll.content[0]!.text!.split('\n\n')[1]!)).toEqual(theirPoll.structuredContent);

      const [theirOpen, ourOpen] = await both('permissions_list_open', {});
      expect(ourOpen.structuredContent).toEqual(theirOpen.structuredContent);
      expect(ourOpen.content[0]?.text).toContain('"approvals": []');

      const [theirMissing, ourMissing] = await both('conversation_get', { session_key: 'agent:main:nowhere' });
      expect(theirMissing.isError).toBe(true);
      expect(ourMissing.isError).toBe(true);
      expect(ourMissing.content[0]?.text).toContain('conversation not found: agent:main:nowhere');
    });
  });
});
