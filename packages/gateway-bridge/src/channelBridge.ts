import type { GatewayEventFrame, HelloOk } from '@capnode/protocol/gateway';
import { createGatewayClient } from './client.js';
import type { GatewayClient, GatewayClientInfo, GatewayClientOptions, GatewayLogLevel } from './clientContract.js';
import { GatewayError } from './errors.js';

/** Events kept for polling; older ones are dropped (a poll then reports a `gap`). */
export const CHANNEL_QUEUE_LIMIT = 1_000;
/** How long a tracked gateway approval stays open without its own `expiresAtMs`. */
export const PENDING_APPROVAL_TTL_MS = 30 * 60_000;
/** How long a Claude permission request waits for a `yes <code>` / `no <code>` reply. */
export const PENDING_PERMISSION_TTL_MS = 60 * 60_000;
const SWEEP_INTERVAL_MS = 5 * 60_000;
const EVENTS_WAIT_MAX_MS = 300_000;
/** `yes abcde` / `no abcde`: the code is five letters a-z without `l`. */
const PERMISSION_REPLY = /^(yes|no)\s+([a-km-z]{5})$/i;

/** A gateway session that has a channel route, so replies can go back the same way. */
export interface ChannelConversation {
  readonly sessionKey: string;
  readonly channel: string;
  readonly to: string;
  readonly accountId?: string;
  readonly threadId?: string | number;
  readonly label?: string;
  readonly displayName?: string;
  readonly derivedTitle?: string;
  readonly lastMessagePreview?: string;
  readonly updatedAt: number | null;
}

/** One queued event; `cursor` counts from 1. */
export type ChannelEvent =
  | {
      readonly cursor: number;
      readonly type: 'message';
      readonly sessionKey: string;
      readonly conversation?: ChannelConversation;
      readonly messageId?: string;
      readonly messageSeq?: number;
      readonly role?: string;
      readonly text?: string;
      readonly raw: unknown;
    }
  | { readonly cursor: number; readonly type: 'exec_approval_requested' | 'exec_approval_resolved' | 'plugin_approval_requested' | 'plugin_approval_resolved'; readonly raw: unknown }
  | { readonly cursor: number; readonly type: 'claude_permission_request'; readonly requestId: string; readonly toolName: string; readonly description: string; readonly inputPreview: string };

export interface ChannelEventFilter {
  /** Only events after this cursor (0 for all). */
  readonly afterCursor: number;
  /** Only `message` events of this session. */
  readonly sessionKey?: string | undefined;
}

/** Returned when events after `requested_after_cursor` were already dropped from the queue. */
export interface ChannelEventGap {
  readonly requested_after_cursor: number;
  readonly oldest_available_cursor: number;
}

/** A gateway exec or plugin approval waiting for a decision. */
export interface PendingGatewayApproval {
  readonly kind: 'exec' | 'plugin';
  readonly id: string;
  readonly request?: Record<string, unknown>;
  readonly createdAtMs?: number;
  readonly expiresAtMs?: number;
}

export type GatewayApprovalDecision = 'allow-once' | 'allow-always' | 'deny';

/** A notification the bridge asks the MCP server to send (`notifications/claude/channel`, `.../permission`). */
export interface ChannelNotification {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

export interface ChannelBridgeOptions extends Omit<GatewayClientOptions, 'role' | 'scopes' | 'client' | 'declaration' | 'onEvent' | 'onConnected'> {
  readonly client?: Partial<GatewayClientInfo>;
  /** Operator scopes. Default read, write and approvals; add `operator.admin` to see every device's approvals. */
  readonly scopes?: readonly string[];
  /** Sends an MCP notification; its failures are logged in one line, never thrown. */
  readonly notify?: (notification: ChannelNotification) => void | Promise<void>;
  /** `off` sends no `notifications/claude/channel`. Default `auto`. */
  readonly claudeChannelMode?: 'auto' | 'off';
  readonly queueLimit?: number;
  /** Clock (epoch ms). Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * The operator side behind the channel MCP tools: readiness (after `sessions.subscribe`), an event
 * queue with cursors, pending gateway approvals and Claude permission requests.
 */
export interface ChannelBridge {
  readonly client: GatewayClient;
  /** Resolves once connected and subscribed to session events; rejects when the client stopped for good. */
  waitUntilReady(options?: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<void>;
  isReady(): boolean;
  listConversations(params?: { readonly limit?: number | undefined; readonly search?: string | undefined; readonly channel?: string | undefined; readonly includeDerivedTitles?: boolean | undefined; readonly includeLastMessage?: boolean | undefined }, options?: { readonly signal?: AbortSignal }): Promise<ChannelConversation[]>;
  getConversation(sessionKey: string, options?: { readonly signal?: AbortSignal }): Promise<ChannelConversation | null>;
  readMessages(sessionKey: string, limit?: number, options?: { readonly signal?: AbortSignal }): Promise<unknown[]>;
  readMessage(sessionKey: string, messageId: string, options?: { readonly signal?: AbortSignal; readonly limit?: number }): Promise<Record<string, unknown> | null>;
  sendMessage(params: { readonly sessionKey: string; readonly text: string }, options?: { readonly signal?: AbortSignal }): Promise<unknown>;
  listPendingApprovals(): PendingGatewayApproval[];
  respondToApproval(params: { readonly kind: 'exec' | 'plugin'; readonly id: string; readonly decision: GatewayApprovalDecision }, options?: { readonly signal?: AbortSignal }): Promise<unknown>;
  /** Events after the cursor, oldest first, without consuming them. */
  pollEvents(filter: ChannelEventFilter, limit?: number): { events: ChannelEvent[]; nextCursor: number; gap?: ChannelEventGap };
  /** The next matching event, or `null` after `timeoutMs` (max 300 000) or abort. */
  waitForEvent(filter: ChannelEventFilter, timeoutMs?: number, signal?: AbortSignal): Promise<{ event: ChannelEvent | null; gap?: ChannelEventGap }>;
  /** A `notifications/claude/channel/permission_request` from the MCP client: queued and answerable by a channel reply. */
  handleClaudePermissionRequest(params: { readonly requestId: string; readonly toolName: string; readonly description: string; readonly inputPreview: string }): void;
  /** Drops expired approvals and permission requests (also runs on an unref'd timer while any are pending). */
  sweep(now?: number): void;
  /** Releases waiters and closes the gateway connection. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function str(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : undefined;
}

function record(value: unknown): Record<string, any> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, any>) : undefined;
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

function matches(event: ChannelEvent, filter: ChannelEventFilter): boolean {
  if (event.cursor <= filter.afterCursor) return false;
  if (!filter.sessionKey) return true;
  return 'sessionKey' in event && event.sessionKey === filter.sessionKey;
}

interface Waiter {
  readonly filter: ChannelEventFilter;
  settle(event: ChannelEvent | null): void;
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
  const queueLimit = Math.max(1, options.queueLimit ?? CHANNEL_QUEUE_LIMIT);
  const log = (level: GatewayLogLevel, message: string) => {
    try {
      options.onLog?.(level, message);
    } catch {
      // The logger's problem.
    }
  };
  const queue: ChannelEvent[] = [];
  const waiters = new Set<Waiter>();
  const approvals = new Map<string, { approval: PendingGatewayApproval; trackedAt: number }>();
  const permissions = new Map<string, number>();
  let cursor = 0;
  let closed = false;
  let readyConnId: string | undefined;
  let exactMessageLookup = false;
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  let readyWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];

  const gap = (afterCursor: number): ChannelEventGap | undefined => {
    const oldest = queue[0]?.cursor;
    return oldest !== undefined && afterCursor < oldest - 1 ? { requested_after_cursor: afterCursor, oldest_available_cursor: oldest } : undefined;
  };

  const enqueue = (event: ChannelEvent) => {
    queue.push(event);
    while (queue.length > queueLimit) queue.shift();
    for (const waiter of [...waiters]) {
      const hit = matches(event, waiter.filter);
      if (hit || gap(waiter.filter.afterCursor)) waiter.settle(hit ? event : null);
    }
  };

  const sweep = (at = now()) => {
    for (const [id, createdAt] of permissions) if (at - createdAt >= PENDING_PERMISSION_TTL_MS) permissions.delete(id);
    for (const [id, entry] of approvals) if (at >= (entry.approval.expiresAtMs ?? entry.trackedAt + PENDING_APPROVAL_TTL_MS)) approvals.delete(id);
    if (sweepTimer && permissions.size === 0 && approvals.size === 0) {
      clearInterval(sweepTimer);
      sweepTimer = undefined;
    }
  };

  const ensureSweeper = () => {
    if (sweepTimer || closed) return;
    sweepTimer = setInterval(() => sweep(), SWEEP_INTERVAL_MS);
    // Pending approvals must never keep a stdio server alive after its client left.
    (sweepTimer as { unref?: () => void }).unref?.();
  };

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

  const trackApproval = (kind: 'exec' | 'plugin', payload: Record<string, any>) => {
    const id = str(payload.id);
    if (!id || closed) return;
    approvals.set(id, {
      approval: {
        kind,
        id,
        ...(record(payload.request) ? { request: payload.request as Record<string, unknown> } : {}),
        ...(typeof payload.createdAtMs === 'number' ? { createdAtMs: payload.createdAtMs } : {}),
        ...(typeof payload.expiresAtMs === 'number' ? { expiresAtMs: payload.expiresAtMs } : {}),
      },
      trackedAt: now(),
    });
    ensureSweeper();
  };

  const onSessionMessage = async (payload: Record<string, any>) => {
    const sessionKey = str(payload.sessionKey);
    if (!sessionKey) return;
    const conversation =
      toConversation({ key: sessionKey, lastChannel: payload.lastChannel, lastTo: payload.lastTo, lastAccountId: payload.lastAccountId, lastThreadId: payload.lastThreadId }) ?? undefined;
    const role = str(record(payload.message)?.role);
    const text = firstText(payload.message);
    const reply = text ? PERMISSION_REPLY.exec(text.trim()) : null;
    if (role === 'user' && payload.senderIsOwner === true && reply) {
      const requestId = reply[2]!.toLowerCase();
      if (permissions.has(requestId)) {
        const delivered = await notify({ method: 'notifications/claude/channel/permission', params: { request_id: requestId, behavior: reply[1]!.toLowerCase() === 'yes' ? 'allow' : 'deny' } });
        if (delivered) permissions.delete(requestId);
        return;
      }
    }
    const messageId = str(payload.messageId);
    enqueue({
      cursor: ++cursor,
      type: 'message',
      sessionKey,
      ...(conversation ? { conversation } : {}),
      ...(messageId ? { messageId } : {}),
      ...(typeof payload.messageSeq === 'number' ? { messageSeq: payload.messageSeq } : {}),
      ...(role ? { role } : {}),
      ...(text !== undefined ? { text } : {}),
      raw: payload,
    });
    if (options.claudeChannelMode === 'off' || role !== 'user' || !conversation) return;
    await notify({
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
  };

  const onEvent = (event: GatewayEventFrame) => {
    const payload = record(event.payload) ?? {};
    switch (event.event) {
      case 'session.message':
        void onSessionMessage(payload).catch((error: unknown) => log('warning', `session.message failed: ${error instanceof Error ? error.message : String(error)}`));
        return;
      case 'exec.approval.requested':
      case 'plugin.approval.requested': {
        const kind = event.event.startsWith('exec') ? 'exec' : 'plugin';
        trackApproval(kind, payload);
        enqueue({ cursor: ++cursor, type: `${kind}_approval_requested`, raw: payload });
        return;
      }
      case 'exec.approval.resolved':
      case 'plugin.approval.resolved': {
        const kind = event.event.startsWith('exec') ? 'exec' : 'plugin';
        const id = str(payload.id);
        if (id) approvals.delete(id);
        enqueue({ cursor: ++cursor, type: `${kind}_approval_resolved`, raw: payload });
        return;
      }
      default:
        return;
    }
  };

  const settleReady = (error?: Error) => {
    const pending = readyWaiters;
    readyWaiters = [];
    for (const waiter of pending) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  };

  const onConnected = (hello: HelloOk) => {
    exactMessageLookup = hello.features?.methods.includes('chat.message.get') ?? false;
    const connId = hello.server.connId;
    client.request('sessions.subscribe', {}, { waitForConnection: false }).then(
      () => {
        if (closed || client.hello()?.server.connId !== connId) return;
        readyConnId = connId;
        log('info', 'subscribed to gateway session events');
        settleReady();
      },
      (error: unknown) => {
        log('error', `sessions.subscribe failed: ${error instanceof Error ? error.message : String(error)}`);
        if (error instanceof GatewayError && error.code === 'request_failed' && !error.retryable) settleReady(error);
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
    await new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const entry = {
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (error: Error) => {
          cleanup();
          reject(error);
        },
      };
      const onAbort = () => entry.reject(new GatewayError('aborted', 'waiting for the gateway was aborted'));
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        waitOptions.signal?.removeEventListener('abort', onAbort);
        readyWaiters = readyWaiters.filter((waiter) => waiter !== entry);
      };
      readyWaiters.push(entry);
      // A client that stopped for good (bad token, protocol) will never subscribe.
      client.ready().catch((error: unknown) => entry.reject(error instanceof Error ? error : new Error(String(error))));
      if (waitOptions.signal?.aborted) return onAbort();
      waitOptions.signal?.addEventListener('abort', onAbort, { once: true });
      if (waitOptions.timeoutMs !== undefined) {
        timer = setTimeout(() => entry.reject(new GatewayError('timeout', `the gateway was not ready within ${waitOptions.timeoutMs} ms`, { retryable: true })), waitOptions.timeoutMs);
        (timer as { unref?: () => void }).unref?.();
      }
    });
  };

  const call = async <T>(method: string, params: unknown, signal?: AbortSignal): Promise<T> => {
    await waitUntilReady(signal ? { signal } : {});
    return client.request<T>(method, params, signal ? { signal } : {});
  };

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

  const close = async () => {
    if (closed) return;
    closed = true;
    if (sweepTimer) clearInterval(sweepTimer);
    sweepTimer = undefined;
    approvals.clear();
    permissions.clear();
    for (const waiter of [...waiters]) waiter.settle(null);
    settleReady(new GatewayError('closed', 'the channel bridge is closed'));
    await client.close();
  };

  return {
    client,
    waitUntilReady,
    isReady,
    async listConversations(params = {}, callOptions = {}) {
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
    },
    getConversation,
    readMessages,
    async readMessage(sessionKey, messageId, callOptions = {}) {
      await waitUntilReady(callOptions.signal ? { signal: callOptions.signal } : {});
      if (!exactMessageLookup) {
        const messages = await readMessages(sessionKey, callOptions.limit ?? 100, callOptions);
        return (messages.find((entry) => messageIdOf(entry) === messageId) as Record<string, unknown> | undefined) ?? null;
      }
      const response = await call<{ ok?: boolean; message?: Record<string, unknown> }>('chat.message.get', { sessionKey, messageId }, callOptions.signal);
      return response?.ok === true ? (response.message ?? null) : null;
    },
    async sendMessage(params, callOptions = {}) {
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
    },
    listPendingApprovals() {
      sweep();
      return [...approvals.values()].map((entry) => entry.approval).sort((a, b) => (a.createdAtMs ?? 0) - (b.createdAtMs ?? 0));
    },
    respondToApproval(params, callOptions = {}) {
      return call(params.kind === 'exec' ? 'exec.approval.resolve' : 'plugin.approval.resolve', { id: params.id, decision: params.decision }, callOptions.signal);
    },
    pollEvents(filter, limit = 20) {
      const max = clampInt(limit, 20, 1, 200);
      const events = queue.filter((event) => matches(event, filter)).slice(0, max);
      const missing = gap(filter.afterCursor);
      return { events, nextCursor: events.at(-1)?.cursor ?? (missing ? missing.oldest_available_cursor - 1 : filter.afterCursor), ...(missing ? { gap: missing } : {}) };
    },
    async waitForEvent(filter, timeoutMs = 30_000, signal) {
      const existing = queue.find((event) => matches(event, filter));
      const missing = gap(filter.afterCursor);
      if (existing || missing || closed || signal?.aborted) return { event: existing ?? null, ...(missing ? { gap: missing } : {}) };
      return new Promise((resolve) => {
        let settled = false;
        const onAbort = () => waiter.settle(null);
        const timer = setTimeout(() => waiter.settle(null), clampInt(timeoutMs, 30_000, 1, EVENTS_WAIT_MAX_MS));
        (timer as { unref?: () => void }).unref?.();
        const waiter: Waiter = {
          filter,
          settle(event) {
            if (settled) return;
            settled = true;
            waiters.delete(waiter);
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            const current = gap(filter.afterCursor);
            resolve({ event, ...(current ? { gap: current } : {}) });
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(waiter);
      });
    },
    handleClaudePermissionRequest(params) {
      if (closed) return;
      permissions.set(params.requestId.toLowerCase(), now());
      ensureSweeper();
      enqueue({ cursor: ++cursor, type: 'claude_permission_request', requestId: params.requestId, toolName: params.toolName, description: params.description, inputPreview: params.inputPreview });
    },
    sweep,
    close,
    [Symbol.asyncDispose]: close,
  };
}
