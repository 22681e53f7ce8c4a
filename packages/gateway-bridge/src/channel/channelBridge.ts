import type { GatewayEventFrame, HelloOk } from '@capnode/protocol/gateway';
import { isPlainObject } from '@capnode/toolkit';
import { createGatewayClient } from '../connection/client.js';
import type { GatewayLogLevel } from '../connection/clientContract.js';
import type { ChannelBridge, ChannelBridgeOptions, ChannelConversation, ChannelNotification } from './channelContract.js';
import { GatewayError } from '../errors.js';
import { createApprovalTracker, type ApprovalTracker } from '../internal/approvalTracker.js';
import { EVENTS_WAIT_MAX_MS, createEventQueue, type EventQueue } from '../internal/eventQueue.js';
import { createWaiterSet } from '../internal/waiters.js';

/** Events kept for polling; older ones are dropped (a poll then reports a `gap`). */
export const CHANNEL_QUEUE_LIMIT = 1_000;
export { PENDING_APPROVAL_TTL_MS, PENDING_PERMISSION_TTL_MS } from '../internal/approvalTracker.js';
/** `yes abcde` / `no abcde`: the code is five letters a-z without `l`. */
const PERMISSION_REPLY = /^(yes|no)\s+([a-km-z]{5})$/i;

function str(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : undefined;
}

function record(value: unknown): Record<string, any> | undefined {
  return isPlainObject(value) ? value : undefined;
}

function clampInt(value: unknown, fallback: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return Math.min(Math.max(Math.trunc(value), min), max);
}

/** A session row as a conversation, or `null` when it has no channel route. */
export function toConversation(row: Record<string, any>): ChannelConversation | null {
  const channel = (str(row.deliveryContext?.channel) ?? str(row.lastChannel) ?? str(row.channel) ?? str(row.origin?.provider))?.toLowerCase();
  const to = str(row.deliveryContext?.to) ?? str(row.lastTo);
  const sessionKey = str(row.key);
  if (!channel || !to || !sessionKey) return null;
  const accountId = str(row.deliveryContext?.accountId) ?? str(row.lastAccountId) ?? str(row.origin?.accountId);
  const threadId = row.deliveryContext?.threadId ?? row.lastThreadId ?? row.origin?.threadId;
  const optional = (key: string, value: string | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    sessionKey,
    channel,
    to,
    ...optional('accountId', accountId),
    ...(typeof threadId === 'string' || typeof threadId === 'number' ? { threadId } : {}),
    ...optional('label', str(row.label)),
    ...optional('displayName', str(row.displayName)),
    ...optional('derivedTitle', str(row.derivedTitle)),
    ...optional('lastMessagePreview', str(row.lastMessagePreview)),
    updatedAt: typeof row.updatedAt === 'number' ? row.updatedAt : null,
  };
}

/** The first text of a chat message (`content` as a string or as blocks). */
export function firstText(message: unknown): string | undefined {
  const content = record(message)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    const entry = record(block);
    if (entry?.type === 'text' && typeof entry.text === 'string') return entry.text;
  }
  return undefined;
}

/** Non-text content blocks of a message (images, files, media references). */
export function messageAttachments(message: unknown): unknown[] {
  const entry = record(message);
  const content = Array.isArray(entry?.content) ? (entry.content as unknown[]) : [];
  const blocks = content.filter((block) => record(block) && str(record(block)!.type) !== 'text');
  const media = Array.isArray(entry?.media) ? (entry.media as unknown[]).map((item) => ({ type: 'openclaw_media', media: item })) : [];
  return [...blocks, ...media];
}

function messageIdOf(entry: unknown): string | undefined {
  const value = record(entry);
  return str(value?.id) ?? str(record(value?.__openclaw)?.id);
}

/**
 * Creates the channel bridge and starts its operator connection (client `cli`). The initial connect
 * retries on retryable failures like every reconnect; after each (re)connect it subscribes to session
 * events again, and tools wait for that.
 *
 * @example
 * await using bridge = createChannelBridge({ url, token, identity, deviceTokens, createSocket: createWsSocketFactory() });
 * await bridge.waitUntilReady();
 * const { events, nextCursor } = bridge.pollEvents({ afterCursor: 0 });
 */
export function createChannelBridge(options: ChannelBridgeOptions): ChannelBridge {
  const now = options.now ?? Date.now;
  const log = (level: GatewayLogLevel, message: string) => {
    try {
      options.onLog?.(level, message);
    } catch {
      // The logger's problem.
    }
  };
  const queue = createEventQueue(Math.max(1, options.queueLimit ?? CHANNEL_QUEUE_LIMIT));
  const tracker = createApprovalTracker(now);
  let closed = false;
  let readyConnId: string | undefined;
  let exactMessageLookup = false;

  const notify = async (notification: ChannelNotification): Promise<boolean> => {
    if (!options.notify || closed) return false;
    try {
      await options.notify(notification);
      return true;
    } catch (error) {
      if (!closed) log('warning', `notification ${notification.method} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      return false;
    }
  };

  const onEvent = (event: GatewayEventFrame) => {
    const payload = record(event.payload) ?? {};
    switch (event.event) {
      case 'session.message':
        void onSessionMessage(payload, { queue, tracker, notify, claudeChannelMode: options.claudeChannelMode }).catch((error: unknown) =>
          log('warning', `session.message failed: ${error instanceof Error ? error.message : String(error)}`),
        );
        return;
      case 'exec.approval.requested':
      case 'plugin.approval.requested': {
        const kind = event.event.startsWith('exec') ? 'exec' : 'plugin';
        if (!closed) tracker.track(kind, payload);
        queue.push({ type: `${kind}_approval_requested`, raw: payload });
        return;
      }
      case 'exec.approval.resolved':
      case 'plugin.approval.resolved': {
        const kind = event.event.startsWith('exec') ? 'exec' : 'plugin';
        const id = str(payload.id);
        if (id) tracker.resolved(id);
        queue.push({ type: `${kind}_approval_resolved`, raw: payload });
        return;
      }
      default:
        return;
    }
  };

  /** Callers of `waitUntilReady()` until the bridge is subscribed to session events. */
  const subscribed = createWaiterSet<void>();
  const onConnected = (hello: HelloOk) => {
    exactMessageLookup = hello.features?.methods.includes('chat.message.get') ?? false;
    const connId = hello.server.connId;
    client.request('sessions.subscribe', {}, { waitForConnection: false }).then(
      () => {
        if (closed || client.hello()?.server.connId !== connId) return;
        readyConnId = connId;
        log('info', 'subscribed to gateway session events');
        subscribed.resolveAll();
      },
      (error: unknown) => {
        log('error', `sessions.subscribe failed: ${error instanceof Error ? error.message : String(error)}`);
        if (error instanceof GatewayError && error.code === 'request_failed' && !error.retryable) subscribed.rejectAll(error);
      },
    );
  };

  const client = createGatewayClient({
    ...options,
    role: 'operator',
    scopes: options.scopes ?? ['operator.read', 'operator.write', 'operator.approvals'],
    client: { id: 'cli', mode: 'cli', version: '0.0.0', platform: 'linux', displayName: 'capnode channel', ...options.client },
    declaration: () => ({ caps: ['approvals'], commands: [] }),
    onEvent,
    onConnected,
  });

  const isReady = () => !closed && readyConnId !== undefined && client.hello()?.server.connId === readyConnId;
  const waitUntilReady: ChannelBridge['waitUntilReady'] = async (waitOptions = {}) => {
    if (isReady()) return;
    if (closed) throw new GatewayError('closed', 'the channel bridge is closed');
    const waiting = subscribed.wait({
      timeoutMs: waitOptions.timeoutMs,
      signal: waitOptions.signal,
      timeoutError: () => new GatewayError('timeout', `the gateway was not ready within ${waitOptions.timeoutMs} ms`, { retryable: true }),
      abortError: () => new GatewayError('aborted', 'waiting for the gateway was aborted'),
    });
    // A client that stopped for good (bad token, protocol) will never subscribe.
    client.ready().catch((error: unknown) => subscribed.rejectAll(error instanceof Error ? error : new Error(String(error))));
    await waiting;
  };
  const call = async <T>(method: string, params: unknown, signal?: AbortSignal): Promise<T> => {
    await waitUntilReady(signal ? { signal } : {});
    return client.request<T>(method, params, signal ? { signal } : {});
  };
  const reads = createChannelReads(call, waitUntilReady, () => exactMessageLookup);

  const close = async () => {
    if (closed) return;
    closed = true;
    tracker.close();
    queue.close();
    subscribed.rejectAll(new GatewayError('closed', 'the channel bridge is closed'));
    await client.close();
  };

  return {
    client,
    waitUntilReady,
    isReady,
    ...reads,
    listPendingApprovals: () => tracker.list(),
    respondToApproval(params, callOptions = {}) {
      return call(params.kind === 'exec' ? 'exec.approval.resolve' : 'plugin.approval.resolve', { id: params.id, decision: params.decision }, callOptions.signal);
    },
    pollEvents: (filter, limit = 20) => queue.poll(filter, clampInt(limit, 20, 1, 200)),
    waitForEvent: (filter, timeoutMs = 30_000, signal) => queue.wait(filter, clampInt(timeoutMs, 30_000, 1, EVENTS_WAIT_MAX_MS), signal),
    handleClaudePermissionRequest(params) {
      if (closed) return;
      tracker.addPermission(params.requestId.toLowerCase());
      queue.push({ type: 'claude_permission_request', requestId: params.requestId, toolName: params.toolName, description: params.description, inputPreview: params.inputPreview });
    },
    sweep: (at) => tracker.sweep(at),
    close,
    [Symbol.asyncDispose]: close,
  };
}

type Call = <T>(method: string, params: unknown, signal?: AbortSignal) => Promise<T>;

/** The bridge's conversation reads and sends (sessions.*, chat.message.get, send). */
function createChannelReads(call: Call, waitUntilReady: ChannelBridge['waitUntilReady'], exactMessageLookup: () => boolean) {
  const getConversation: ChannelBridge['getConversation'] = async (sessionKey, callOptions = {}) => {
    const key = sessionKey.trim();
    if (!key) return null;
    const response = await call<{ session?: Record<string, any> | null }>('sessions.describe', { key, includeDerivedTitles: true, includeLastMessage: true }, callOptions.signal);
    return response?.session ? toConversation(response.session) : null;
  };
  const readMessages: ChannelBridge['readMessages'] = async (sessionKey, limit = 20, callOptions = {}) => {
    const response = await call<{ messages?: unknown[] }>('sessions.get', { key: sessionKey, limit: clampInt(limit, 20, 1, 200) }, callOptions.signal);
    return Array.isArray(response?.messages) ? response.messages : [];
  };
  const listConversations: ChannelBridge['listConversations'] = async (params = {}, callOptions = {}) => {
    const limit = clampInt(params.limit, 50, 1, 500);
    const response = await call<{ sessions?: Array<Record<string, any>> }>(
      'sessions.list',
      { limit, ...(params.search ? { search: params.search } : {}), includeDerivedTitles: params.includeDerivedTitles ?? true, includeLastMessage: params.includeLastMessage ?? true },
      callOptions.signal,
    );
    const channel = str(params.channel)?.toLowerCase();
    return (response?.sessions ?? [])
      .map((row) => toConversation(row))
      .filter((conversation): conversation is ChannelConversation => conversation !== null && (!channel || conversation.channel === channel));
  };
  const readMessage: ChannelBridge['readMessage'] = async (sessionKey, messageId, callOptions = {}) => {
    await waitUntilReady(callOptions.signal ? { signal: callOptions.signal } : {});
    if (!exactMessageLookup()) {
      const messages = await readMessages(sessionKey, callOptions.limit ?? 100, callOptions);
      return (messages.find((entry) => messageIdOf(entry) === messageId) as Record<string, unknown> | undefined) ?? null;
    }
    const response = await call<{ ok?: boolean; message?: Record<string, unknown> }>('chat.message.get', { sessionKey, messageId }, callOptions.signal);
    return response?.ok === true ? (response.message ?? null) : null;
  };
  const sendMessage: ChannelBridge['sendMessage'] = async (params, callOptions = {}) => {
    const conversation = await getConversation(params.sessionKey, callOptions);
    if (!conversation) throw new GatewayError('request_failed', `Conversation not found for session ${params.sessionKey}`);
    return call(
      'send',
      {
        to: conversation.to,
        channel: conversation.channel,
        ...(conversation.accountId ? { accountId: conversation.accountId } : {}),
        ...(conversation.threadId === undefined ? {} : { threadId: String(conversation.threadId) }),
        message: params.text,
        sessionKey: conversation.sessionKey,
        idempotencyKey: crypto.randomUUID(),
      },
      callOptions.signal,
    );
  };
  return { listConversations, getConversation, readMessages, readMessage, sendMessage };
}

interface SessionMessageContext {
  readonly queue: EventQueue;
  readonly tracker: ApprovalTracker;
  readonly notify: (notification: ChannelNotification) => Promise<boolean>;
  readonly claudeChannelMode: 'auto' | 'off' | undefined;
}

/**
 * A `session.message` event: a `yes <code>` / `no <code>` from the owner answers a pending Claude
 * permission request; anything else is queued and, for user messages with a route, sent on as
 * `notifications/claude/channel`.
 */
async function onSessionMessage(payload: Record<string, any>, context: SessionMessageContext): Promise<void> {
  const sessionKey = str(payload.sessionKey);
  if (!sessionKey) return;
  const conversation = toConversation({ key: sessionKey, lastChannel: payload.lastChannel, lastTo: payload.lastTo, lastAccountId: payload.lastAccountId, lastThreadId: payload.lastThreadId }) ?? undefined;
  const role = str(record(payload.message)?.role);
  const text = firstText(payload.message);
  const reply = text ? PERMISSION_REPLY.exec(text.trim()) : null;
  if (role === 'user' && payload.senderIsOwner === true && reply) {
    const requestId = reply[2]!.toLowerCase();
    if (context.tracker.hasPermission(requestId)) {
      const delivered = await context.notify({ method: 'notifications/claude/channel/permission', params: { request_id: requestId, behavior: reply[1]!.toLowerCase() === 'yes' ? 'allow' : 'deny' } });
      if (delivered) context.tracker.deletePermission(requestId);
      return;
    }
  }
  const messageId = str(payload.messageId);
  context.queue.push({
    type: 'message',
    sessionKey,
    ...(conversation ? { conversation } : {}),
    ...(messageId ? { messageId } : {}),
    ...(typeof payload.messageSeq === 'number' ? { messageSeq: payload.messageSeq } : {}),
    ...(role ? { role } : {}),
    ...(text !== undefined ? { text } : {}),
    raw: payload,
  });
  if (context.claudeChannelMode === 'off' || role !== 'user' || !conversation) return;
  await context.notify({
    method: 'notifications/claude/channel',
    params: {
      content: text ?? '[non-text message]',
      meta: {
        session_key: sessionKey,
        channel: conversation.channel,
        to: conversation.to,
        account_id: conversation.accountId ?? '',
        thread_id: conversation.threadId === undefined ? '' : String(conversation.threadId),
        message_id: messageId ?? '',
      },
    },
  });
}
