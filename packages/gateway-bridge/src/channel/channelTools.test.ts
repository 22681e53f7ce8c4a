import { createInvoker, createRegistry } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import type { ChannelBridge } from './channelContract.js';
import { CHANNEL_TOOL_NAMES, createChannelCapability } from './channelTools.js';
import { GatewayError } from '../errors.js';

function stubBridge(overrides: Partial<ChannelBridge> = {}): ChannelBridge {
  return {
    listConversations: async () => [{ sessionKey: 's1', channel: 'telegram', to: 'c1', updatedAt: 5 }],
    pollEvents: () => ({ events: [], nextCursor: 0 }),
    listPendingApprovals: () => [{ kind: 'exec', id: 'a1', createdAtMs: 1 }],
    ...overrides,
  } as ChannelBridge;
}

describe('channel tools', () => {
  it('are the nine OpenClaw tools, all local-only (never declared to a gateway)', () => {
    const registry = createRegistry([createChannelCapability(stubBridge())]);
    expect(registry.commands().map((command) => command.name)).toEqual([...CHANNEL_TOOL_NAMES]);
    expect(registry.commands({ excludeLocalOnly: true })).toEqual([]);
    expect(registry.resolve('events_wait')?.inputSchema).toMatchObject({ properties: { after_cursor: {}, session_key: {}, timeout_ms: {} } });
    expect(registry.resolve('permissions_respond')?.inputSchema).toMatchObject({ required: ['kind', 'id', 'decision'] });
  });

  it('put the data in the text content as well as in structured content', async () => {
    const invoker = createInvoker({ registry: createRegistry([createChannelCapability(stubBridge())]) });
    const { result } = await invoker.invoke({ command: 'conversations_list', args: {}, transport: 'mcp-stdio' });
    const conversations = [{ sessionKey: 's1', channel: 'telegram', to: 'c1', updatedAt: 5 }];
    expect(result).toEqual({ ok: true, structured: { conversations }, content: [{ type: 'text', text: `conversations: 1\n\n${JSON.stringify({ conversations }, null, 2)}` }] });
    const approvals = await invoker.invoke({ command: 'permissions_list_open', args: {}, transport: 'mcp-stdio' });
    expect(approvals.result.ok && approvals.result.content[0]).toMatchObject({ text: expect.stringMatching(/^approvals: 1\n\n.*"id": "a1"/s) });
  });

  it('report gateway failures as tool errors with the gateway message, and validate arguments', async () => {
    const invoker = createInvoker({
      registry: createRegistry([
        createChannelCapability(
          stubBridge({
            listConversations: async () => {
              throw new GatewayError('request_failed', 'sessions.list failed: missing scope: operator.read (MISSING_SCOPE)');
            },
          }),
        ),
      ]),
    });
    const failed = await invoker.invoke({ command: 'conversations_list', args: {}, transport: 'mcp-stdio' });
    expect(failed.result).toEqual({ ok: false, error: { code: 'failed', message: 'sessions.list failed: missing scope: operator.read (MISSING_SCOPE)' } });
    const invalid = await invoker.invoke({ command: 'permissions_respond', args: { kind: 'shell', id: 'x', decision: 'deny' }, transport: 'mcp-stdio' });
    expect(invalid.result).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });
});
