import type { LogLevel } from '@capnode/toolkit';
import type { OpenAgentClientFrame, OpenAgentToolCall } from '@capnode/protocol/openagent';
import type { OpenAgentPhase, OpenAgentStatus } from '../../status/hostStatus.js';
import type { OpenAgentCatalog } from './catalog.js';
import type { EventQueue } from './events.js';

/** Where and as whom the channel connects; from `openagent` in settings.json (or `serve --openagent`). */
export interface OpenAgentChannelConfig {
  readonly url: string;
  /** Handshake headers; secrets, never logged or reported. */
  readonly headers: Readonly<Record<string, string>>;
  readonly deviceId: string;
  readonly accountId: string;
  readonly networkId?: string | undefined;
  readonly deviceLabel: string;
  readonly heartbeatMs: number;
}

/** One running call on the channel. */
export interface ActiveCall {
  readonly controller: AbortController;
  readonly mutating: boolean;
  readonly startedAt: number;
}

/** What a call sees of the connection it arrived on. */
export interface ChannelSession {
  readonly acknowledged: boolean;
  readonly generation: number;
  readonly active: Map<string, ActiveCall>;
  /** Serialized write of a frame; rejects with `capability_transport_lost` when the socket is gone. */
  send(frame: OpenAgentClientFrame, options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Serialized write of a frame encoded at the head of the queue (artifact chunks). */
  sendEncoded(encode: () => string, options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Drops the socket without a close handshake (the ambiguity rule); the channel reconnects. */
  terminate(reason: string): void;
  /** Closes the socket with `code` (1008 after an account mismatch); the channel reconnects. */
  close(code: number, reason: string): void;
  /** The channel's active count changed. */
  changed(): void;
}

/** The ports a channel works through. */
export interface ChannelPorts {
  readonly instanceId: string;
  readonly generation: number;
  catalog(): OpenAgentCatalog;
  runCall(call: OpenAgentToolCall, session: ChannelSession): Promise<void>;
  log(level: LogLevel, message: string): void;
  /** The status changed (phase, active calls). */
  onChange?(): void;
  /** Background events (`shell_completed`) waiting for the server's ack. */
  readonly events?: EventQueue;
}

/**
 * The channel's own part of {@link OpenAgentStatus}: what the host adds (the consent switch, device
 * and account ids, the one line for people) is left out; the channel runs only when enabled, with a URL.
 */
export type OpenAgentChannelStatus = Omit<OpenAgentStatus, 'enabled' | 'phase' | 'url' | 'deviceId' | 'accountId' | 'detail'> & {
  readonly phase: Exclude<OpenAgentPhase, 'disabled'>;
  readonly url: string;
};
