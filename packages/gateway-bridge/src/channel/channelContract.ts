import type { GatewayClient, GatewayClientInfo, GatewayClientOptions } from '../connection/clientContract.js';

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
