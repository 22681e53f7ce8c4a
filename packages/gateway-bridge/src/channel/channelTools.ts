import { CapabilityError, defineCapability, defineCommand, type Capability, type CommandSuccess } from '@capnode/capabilities';
import { z } from 'zod';
import { isGatewayError } from '../errors.js';
import { messageAttachments } from './channelBridge.js';
import type { ChannelBridge } from './channelContract.js';

/** The channel tools, with the names and snake_case arguments of OpenClaw's own `openclaw mcp serve`. */
export const CHANNEL_TOOL_NAMES = [
  'conversations_list',
  'conversation_get',
  'messages_read',
  'attachments_fetch',
  'events_poll',
  'events_wait',
  'messages_send',
  'permissions_list_open',
  'permissions_respond',
] as const;

/**
 * A result whose text carries the data as well as `structuredContent`: `"<label>\n\n<JSON>"`.
 * (OpenClaw's own server puts only a count in the text of several tools, so clients that ignore
 * `structuredContent` see nothing.)
 */
function result(label: string, structured: Record<string, unknown>): CommandSuccess {
  return { ok: true, content: [{ type: 'text', text: `${label}\n\n${JSON.stringify(structured, null, 2)}` }], structured };
}

/** Gateway failures as tool errors with the gateway's message; anything else stays internal. */
async function gateway<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isGatewayError(error)) throw new CapabilityError(error.code === 'timeout' ? 'timeout' : 'failed', error.message, { cause: error });
    throw error;
  }
}

/**
 * The nine channel tools as a capability over `bridge`, so every transport (the channel stdio server,
 * the local HTTP server) serves them through the same pipeline. All are `localOnly`: they are never
 * declared to a gateway as node commands.
 *
 * @example
 * const registry = createRegistry([createChannelCapability(bridge)]);
 * await serveStdio({ invoker: createInvoker({ registry }) }); // `capnode mcp channel`
 */
export function createChannelCapability(bridge: ChannelBridge): Capability {
  const sessionKey = z.string().min(1);
  return defineCapability({
    category: 'channel',
    commands: [
      defineCommand({
        name: 'conversations_list',
        description: 'List OpenClaw channel-backed conversations available through session routes.',
        annotations: { readOnly: true, openWorld: true },
        localOnly: true,
        input: z.object({
          limit: z.number().int().min(1).max(500).optional(),
          search: z.string().optional(),
          channel: z.string().optional(),
          includeDerivedTitles: z.boolean().optional(),
          includeLastMessage: z.boolean().optional(),
        }),
        async execute(args, context) {
          const conversations = await gateway(() => bridge.listConversations(args, { signal: context.signal }));
          return result(`conversations: ${conversations.length}`, { conversations });
        },
      }),
      defineCommand({
        name: 'conversation_get',
        description: 'Get one OpenClaw conversation by session key.',
        annotations: { readOnly: true, openWorld: true },
        localOnly: true,
        input: z.object({ session_key: sessionKey }),
        async execute(args, context) {
          const conversation = await gateway(() => bridge.getConversation(args.session_key, { signal: context.signal }));
          if (!conversation) throw new CapabilityError('failed', `conversation not found: ${args.session_key}`);
          return result(`conversation ${conversation.sessionKey}`, { conversation });
        },
      }),
      defineCommand({
        name: 'messages_read',
        description: 'Read recent messages for one OpenClaw conversation.',
        annotations: { readOnly: true, openWorld: true },
        localOnly: true,
        input: z.object({ session_key: sessionKey, limit: z.number().int().min(1).max(200).optional() }),
        async execute(args, context) {
          const messages = await gateway(() => bridge.readMessages(args.session_key, args.limit ?? 20, { signal: context.signal }));
          return result(`messages: ${messages.length}`, { messages });
        },
      }),
      defineCommand({
        name: 'attachments_fetch',
        description: 'List non-text attachments for a message in one OpenClaw conversation.',
        annotations: { readOnly: true, openWorld: true },
        localOnly: true,
        input: z.object({ session_key: sessionKey, message_id: z.string().min(1), limit: z.number().int().min(1).max(200).optional() }),
        async execute(args, context) {
          const message = await gateway(() => bridge.readMessage(args.session_key, args.message_id, { signal: context.signal, limit: args.limit ?? 100 }));
          if (!message) throw new CapabilityError('failed', `message not found: ${args.message_id}`);
          const attachments = messageAttachments(message);
          return result(`attachments: ${attachments.length}`, { attachments, message });
        },
      }),
      defineCommand({
        name: 'events_poll',
        description: 'Poll queued OpenClaw conversation events since a cursor.',
        annotations: { readOnly: true },
        localOnly: true,
        input: z.object({ after_cursor: z.number().int().min(0).optional(), session_key: z.string().optional(), limit: z.number().int().min(1).max(200).optional() }),
        async execute(args) {
          const { events, nextCursor, gap } = bridge.pollEvents({ afterCursor: args.after_cursor ?? 0, sessionKey: args.session_key?.trim() || undefined }, args.limit ?? 20);
          return result(`events: ${events.length}`, { events, next_cursor: nextCursor, ...(gap ? { gap } : {}) });
        },
      }),
      defineCommand({
        name: 'events_wait',
        description: 'Wait for the next queued OpenClaw conversation event.',
        annotations: { readOnly: true },
        localOnly: true,
        input: z.object({ after_cursor: z.number().int().min(0).optional(), session_key: z.string().optional(), timeout_ms: z.number().int().min(1).max(300_000).optional() }),
        async execute(args, context) {
          const { event, gap } = await bridge.waitForEvent({ afterCursor: args.after_cursor ?? 0, sessionKey: args.session_key?.trim() || undefined }, args.timeout_ms ?? 30_000, context.signal);
          return result(event ? `event ${event.cursor}` : gap ? `event gap before ${gap.oldest_available_cursor}` : 'timeout', { event, ...(gap ? { gap } : {}) });
        },
      }),
      defineCommand({
        name: 'messages_send',
        description: 'Send a message back through the same OpenClaw conversation route.',
        annotations: { openWorld: true },
        localOnly: true,
        input: z.object({ session_key: sessionKey, text: z.string().min(1) }),
        async execute(args, context) {
          const sent = await gateway(() => bridge.sendMessage({ sessionKey: args.session_key, text: args.text }, { signal: context.signal }));
          return result('sent', { result: sent });
        },
      }),
      defineCommand({
        name: 'permissions_list_open',
        description: 'List open OpenClaw exec or plugin approval requests visible through the Gateway.',
        annotations: { readOnly: true },
        localOnly: true,
        input: z.object({}),
        execute() {
          const approvals = bridge.listPendingApprovals();
          return result(`approvals: ${approvals.length}`, { approvals });
        },
      }),
      defineCommand({
        name: 'permissions_respond',
        description: 'Allow or deny one pending OpenClaw exec or plugin approval request.',
        annotations: { openWorld: true },
        localOnly: true,
        input: z.object({ kind: z.enum(['exec', 'plugin']), id: z.string().min(1), decision: z.enum(['allow-once', 'allow-always', 'deny']) }),
        async execute(args, context) {
          const resolved = await gateway(() => bridge.respondToApproval(args, { signal: context.signal }));
          return result('approval resolved', { result: resolved });
        },
      }),
    ],
  });
}
