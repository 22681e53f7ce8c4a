import { armDeadline } from '@capnode/toolkit';
import {
  OPENAGENT_CLOSE_POLICY,
  OPENAGENT_PROTOCOL,
  parseOpenAgentServerFrame,
  type OpenAgentClientFrame,
  type OpenAgentHelloAck,
  type OpenAgentServerFrame,
  type OpenAgentToolCall,
} from '@capnode/protocol/openagent';
import type WebSocket from 'ws';
import type { OpenAgentCatalog } from './catalog.js';
import type { ActiveCall, ChannelPorts, ChannelSession, OpenAgentChannelConfig } from './channelTypes.js';
import { createSocketWriter } from './socketWriter.js';

/** Largest incoming frame (desktop `MAX_PAYLOAD_BYTES`). */
const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** Opening handshake and `capability_hello_ack` must both arrive within this. */
const CONNECT_TIMEOUT_MS = 15_000;
/** Heartbeat acks missed in a row before the connection counts as lost. */
const MISSED_HEARTBEATS = 3;

/** How one connection ended. */
export interface ConnectionEnd {
  readonly code: number;
  readonly reason: string;
  readonly acknowledged: boolean;
}

/** A connection's session, with the flag the hello_ack sets. */
export type LiveSession = ChannelSession & { acknowledged: boolean };

/** What one connection reports to its channel. */
export interface ConnectionHooks {
  readonly active: Map<string, ActiveCall>;
  /** The open connection's session, or `undefined` once it closed. */
  attach(session: LiveSession | undefined, socket: WebSocket | undefined): void;
  /** The server accepted the hello. */
  acknowledged(session: LiveSession): void;
  /** Why the connection is failing (kept for status). */
  error(message: string): void;
  /** The catalog that went out in the hello. */
  offered(catalog: OpenAgentCatalog): void;
  call(frame: OpenAgentToolCall, session: LiveSession): void;
  /** Active calls changed. */
  changed(session: LiveSession): void;
}

/** Whether a hello_ack accepts this host as it introduced itself. */
function ackMatches(ack: OpenAgentHelloAck, config: OpenAgentChannelConfig, ports: ChannelPorts): boolean {
  return (
    ack.protocol === OPENAGENT_PROTOCOL &&
    ack.device_id === config.deviceId &&
    ack.account_id === config.accountId &&
    (ack.network_id === undefined || ack.network_id === config.networkId) &&
    ack.client_instance_id === ports.instanceId &&
    ack.generation === ports.generation &&
    ack.accepted
  );
}

function helloFrame(config: OpenAgentChannelConfig, ports: ChannelPorts, catalog: OpenAgentCatalog): OpenAgentClientFrame {
  return {
    type: 'capability_hello',
    protocol: OPENAGENT_PROTOCOL,
    client_instance_id: ports.instanceId,
    generation: ports.generation,
    device_label: config.deviceLabel,
    ...(config.networkId === undefined ? {} : { network_id: config.networkId }),
    servers: catalog.servers,
  };
}

/** Sends every pending event on `session` (after its hello was acknowledged). */
export function flushEvents(session: LiveSession, ports: ChannelPorts, fail: (error: unknown) => void): void {
  if (!session.acknowledged || !ports.events) return;
  for (const event of ports.events.pending()) session.send({ type: 'client_tool_event', generation: ports.generation, event: { ...event } }).catch(fail);
}

/** Handles one valid server frame on `session`. */
function dispatch(frame: OpenAgentServerFrame, session: LiveSession, context: { config: OpenAgentChannelConfig; ports: ChannelPorts; hooks: ConnectionHooks; onAck(): void; onHeartbeatAck(): void }): void {
  const { config, ports, hooks } = context;
  switch (frame.type) {
    case 'capability_hello_ack':
      if (!ackMatches(frame, config, ports)) {
        const reason = frame.reason ? `registration rejected: ${frame.reason.slice(0, 200)}` : 'registration rejected: the acknowledgement does not match this device, account or instance';
        hooks.error(reason);
        ports.log('warning', `openagent: ${reason}`);
        session.close(OPENAGENT_CLOSE_POLICY, 'Capability registration rejected');
        return;
      }
      session.acknowledged = true;
      context.onAck();
      return;
    case 'capability_heartbeat_ack':
      context.onHeartbeatAck();
      return;
    case 'client_tool_call':
      hooks.call(frame, session);
      return;
    case 'client_tool_cancel':
      if (frame.generation === ports.generation) hooks.active.get(frame.call_id)?.controller.abort(frame.reason ?? 'server_cancelled');
      return;
    case 'client_tool_event_ack':
      ports.events?.ack(frame, ports.generation);
      return;
    default:
      ports.log('debug', `openagent: ${frame.type} frame`);
  }
}

/**
 * Opens one capability WebSocket and runs it until it closes: hello first, the ack's check,
 * heartbeats (and their loss), frame validation, calls handed to `hooks.call`. Resolves with how it ended.
 */
export function openConnection(WebSocketClass: typeof WebSocket, config: OpenAgentChannelConfig, ports: ChannelPorts, hooks: ConnectionHooks): Promise<ConnectionEnd> {
  return new Promise<ConnectionEnd>((resolve) => {
    const ws = new WebSocketClass(config.url, { headers: { ...config.headers }, maxPayload: MAX_PAYLOAD_BYTES, handshakeTimeout: CONNECT_TIMEOUT_MS, perMessageDeflate: false });
    const out = createSocketWriter(ws);
    let lastAck = Date.now();
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    const session: LiveSession = {
      acknowledged: false,
      generation: ports.generation,
      active: hooks.active,
      send: (frame, options) => out.send(() => JSON.stringify(frame), options),
      sendEncoded: (encode, options) => out.send(encode, options),
      terminate: (reason) => {
        hooks.error(reason);
        ws.terminate();
      },
      close: (code, reason) => ws.close(code, reason),
      changed: () => hooks.changed(session),
    };
    hooks.attach(session, ws);
    const handshake = armDeadline({ timeoutMs: CONNECT_TIMEOUT_MS }, () => session.terminate('no capability_hello_ack within 15 s'));
    const fail = (error: unknown) => {
      ports.log('warning', `openagent: ${(error as Error).message}; the connection is dropped`);
      session.terminate((error as Error).message);
    };
    const onAck = () => {
      handshake.clear();
      lastAck = Date.now();
      heartbeat = setInterval(() => {
        if (Date.now() - lastAck > MISSED_HEARTBEATS * config.heartbeatMs) {
          session.terminate('heartbeat acknowledgements stopped');
          return;
        }
        session.send({ type: 'capability_heartbeat', generation: ports.generation, ts_ms: Date.now() }).catch(fail);
        // At least once: an ack can be lost while the socket stays open.
        flushEvents(session, ports, fail);
      }, config.heartbeatMs);
      hooks.acknowledged(session);
    };
    ws.on('open', () => {
      const catalog = ports.catalog();
      hooks.offered(catalog);
      session.send(helloFrame(config, ports, catalog)).catch(fail);
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ports.log('warning', 'openagent: the server sent a binary frame; ignored');
        return;
      }
      const parsed = parseOpenAgentServerFrame(String(data));
      if (parsed.ok) {
        dispatch(parsed.frame, session, { config, ports, hooks, onAck, onHeartbeatAck: () => (lastAck = Date.now()) });
        return;
      }
      ports.log('warning', `openagent: ${parsed.code}: ${parsed.message}`);
      if (parsed.type === 'client_tool_call' && parsed.callId !== undefined && session.acknowledged) {
        session.send({ type: 'client_tool_result', call_id: parsed.callId, generation: ports.generation, error: { code: parsed.code, message: parsed.message } }).catch(fail);
      }
    });
    ws.on('error', (error) => hooks.error(error.message));
    ws.on('close', (code, reason) => {
      handshake.clear();
      if (heartbeat) clearInterval(heartbeat);
      out.stop();
      hooks.attach(undefined, undefined);
      const wasAcknowledged = session.acknowledged;
      session.acknowledged = false;
      for (const call of hooks.active.values()) call.controller.abort('capability channel disconnected');
      resolve({ code, reason: reason.toString('utf8'), acknowledged: wasAcknowledged });
    });
  });
}
