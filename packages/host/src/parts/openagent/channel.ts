import { armDeadline, delay } from '@capnode/toolkit';
import {
  OPENAGENT_CLOSE_CONNECTION_REPLACED,
  OPENAGENT_CLOSE_POLICY,
  OPENAGENT_PROTOCOL,
  parseOpenAgentServerFrame,
  type OpenAgentClientFrame,
  type OpenAgentHelloAck,
  type OpenAgentServerFrame,
} from '@capnode/protocol/openagent';
import type WebSocket from 'ws';
import type { OpenAgentCatalog } from './catalog.js';
import type { ActiveCall, ChannelPorts, ChannelSession, OpenAgentChannelConfig, OpenAgentChannelStatus } from './channelTypes.js';
import { createSocketWriter, type SocketWriter } from './socketWriter.js';

/** Largest incoming frame (desktop `MAX_PAYLOAD_BYTES`). */
const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** Opening handshake and `capability_hello_ack` must both arrive within this. */
const CONNECT_TIMEOUT_MS = 15_000;
/** Heartbeat acks missed in a row before the connection counts as lost. */
const MISSED_HEARTBEATS = 3;

/** Reconnect pause after `attempt` failed tries: `min(30 s, 1 s · 2^min(n, 5))`. */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
}

/** A running channel: connects, reconnects, and serves calls until closed. */
export interface OpenAgentChannel {
  status(): OpenAgentChannelStatus;
  /** The catalog may have changed: send `capability_catalog_update` when it did. */
  catalogChanged(): void;
  /** Stops reconnecting, cancels running calls and closes the socket; resolves once the calls ended. */
  close(): Promise<void>;
}

interface ConnectionEnd {
  readonly code: number;
  readonly reason: string;
  readonly acknowledged: boolean;
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

/** Connects to `config.url` in the background and keeps the channel up (see the module's spec notes). */
export function createOpenAgentChannel(config: OpenAgentChannelConfig, ports: ChannelPorts): OpenAgentChannel {
  const stopping = new AbortController();
  const active = new Map<string, ActiveCall>();
  const running = new Set<Promise<void>>();
  let phase: OpenAgentChannelStatus['phase'] = 'connecting';
  let socket: WebSocket | undefined;
  let session: (ChannelSession & { acknowledged: boolean }) | undefined;
  let writer: SocketWriter | undefined;
  let lastError: string | undefined;
  let closeCode: number | undefined;
  let connectedAt: number | undefined;
  let nextRetryAt: number | undefined;
  let sentCatalog: OpenAgentCatalog | undefined;
  const changed = () => ports.onChange?.();
  const setPhase = (next: OpenAgentChannelStatus['phase']) => {
    if (phase === next) return;
    phase = next;
    changed();
  };
  const abortAll = (reason: string) => {
    for (const call of active.values()) call.controller.abort(reason);
  };
  const encode = (frame: OpenAgentClientFrame) => JSON.stringify(frame);

  function dispatch(frame: OpenAgentServerFrame, current: ChannelSession & { acknowledged: boolean }, acked: () => void, heartbeatAcked: () => void): void {
    switch (frame.type) {
      case 'capability_hello_ack':
        if (!ackMatches(frame, config, ports)) {
          lastError = frame.reason ? `registration rejected: ${frame.reason.slice(0, 200)}` : 'registration rejected: the acknowledgement does not match this device, account or instance';
          ports.log('warning', `openagent: ${lastError}`);
          current.close(OPENAGENT_CLOSE_POLICY, 'Capability registration rejected');
          return;
        }
        current.acknowledged = true;
        lastError = undefined;
        acked();
        return;
      case 'capability_heartbeat_ack':
        heartbeatAcked();
        return;
      case 'client_tool_call': {
        const work = ports.runCall(frame, current).catch((error: unknown) => ports.log('error', `openagent: call ${frame.call_id} failed: ${(error as Error).message}`));
        running.add(work);
        void work.finally(() => running.delete(work));
        return;
      }
      case 'client_tool_cancel':
        if (frame.generation === ports.generation) active.get(frame.call_id)?.controller.abort(frame.reason ?? 'server_cancelled');
        return;
      default:
        ports.log('debug', `openagent: ${frame.type} frame`);
    }
  }

  async function connectOnce(): Promise<ConnectionEnd> {
    const { default: WebSocketClass } = await import('ws');
    lastError = undefined;
    return new Promise<ConnectionEnd>((resolve) => {
      const ws = new WebSocketClass(config.url, { headers: { ...config.headers }, maxPayload: MAX_PAYLOAD_BYTES, handshakeTimeout: CONNECT_TIMEOUT_MS, perMessageDeflate: false });
      socket = ws;
      const out = createSocketWriter(ws);
      writer = out;
      let lastAck = Date.now();
      let heartbeat: ReturnType<typeof setInterval> | undefined;
      const current: ChannelSession & { acknowledged: boolean } = {
        acknowledged: false,
        generation: ports.generation,
        active,
        send: (frame, options) => out.send(() => encode(frame), options),
        sendEncoded: (make, options) => out.send(make, options),
        terminate: (reason) => {
          lastError = reason;
          ws.terminate();
        },
        close: (code, reason) => ws.close(code, reason),
        changed: () => {
          if (current.acknowledged) setPhase(active.size > 0 ? 'active' : 'connected');
          changed();
        },
      };
      session = current;
      const handshake = armDeadline({ timeoutMs: CONNECT_TIMEOUT_MS }, () => {
        lastError = 'no capability_hello_ack within 15 s';
        ws.terminate();
      });
      const fail = (error: unknown) => {
        if (stopping.signal.aborted) return;
        lastError = (error as Error).message;
        ports.log('warning', `openagent: ${lastError}; the connection is dropped`);
        ws.terminate();
      };
      ws.on('open', () => {
        const catalog = ports.catalog();
        sentCatalog = catalog;
        const hello: OpenAgentClientFrame = {
          type: 'capability_hello',
          protocol: OPENAGENT_PROTOCOL,
          client_instance_id: ports.instanceId,
          generation: ports.generation,
          device_label: config.deviceLabel,
          ...(config.networkId === undefined ? {} : { network_id: config.networkId }),
          servers: catalog.servers,
        };
        current.send(hello).catch(fail);
      });
      const acked = () => {
        handshake.clear();
        connectedAt = Date.now();
        nextRetryAt = undefined;
        closeCode = undefined;
        lastAck = Date.now();
        setPhase(active.size > 0 ? 'active' : 'connected');
        ports.log('info', `openagent: connected to ${config.url} (instance ${ports.instanceId}, generation ${ports.generation})`);
        heartbeat = setInterval(() => {
          if (Date.now() - lastAck > MISSED_HEARTBEATS * config.heartbeatMs) {
            lastError = 'heartbeat acknowledgements stopped';
            ws.terminate();
            return;
          }
          current.send({ type: 'capability_heartbeat', generation: ports.generation, ts_ms: Date.now() }).catch(fail);
        }, config.heartbeatMs);
        // A catalog that changed while the hello was on its way goes out now.
        sendCatalogUpdate();
      };
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          ports.log('warning', 'openagent: the server sent a binary frame; ignored');
          return;
        }
        const parsed = parseOpenAgentServerFrame(String(data));
        if (!parsed.ok) {
          ports.log('warning', `openagent: ${parsed.code}: ${parsed.message}`);
          if (parsed.type === 'client_tool_call' && parsed.callId !== undefined && current.acknowledged) {
            current.send({ type: 'client_tool_result', call_id: parsed.callId, generation: ports.generation, error: { code: parsed.code, message: parsed.message } }).catch(fail);
          }
          return;
        }
        dispatch(parsed.frame, current, acked, () => (lastAck = Date.now()));
      });
      ws.on('error', (error) => {
        lastError = error.message;
      });
      ws.on('close', (code, reason) => {
        handshake.clear();
        if (heartbeat) clearInterval(heartbeat);
        out.stop();
        if (socket === ws) socket = undefined;
        if (session === current) session = undefined;
        const wasAcknowledged = current.acknowledged;
        current.acknowledged = false;
        connectedAt = undefined;
        abortAll('capability channel disconnected');
        resolve({ code, reason: reason.toString('utf8'), acknowledged: wasAcknowledged });
      });
    });
  }

  function sendCatalogUpdate(): void {
    const current = session;
    if (!current?.acknowledged) return;
    const catalog = ports.catalog();
    if (sentCatalog && catalog.key === sentCatalog.key) return;
    sentCatalog = catalog;
    current.send({ type: 'capability_catalog_update', generation: ports.generation, servers: catalog.servers }).catch((error: unknown) => {
      ports.log('warning', `openagent: catalog update not sent: ${(error as Error).message}`);
    });
    changed();
  }

  async function loop(): Promise<void> {
    let attempt = 0;
    while (!stopping.signal.aborted) {
      setPhase('connecting');
      const end = await connectOnce().catch((error: unknown): ConnectionEnd => ({ code: 1006, reason: (error as Error).message, acknowledged: false }));
      if (stopping.signal.aborted) return;
      closeCode = end.code;
      if (end.acknowledged) attempt = 0;
      if (end.code === OPENAGENT_CLOSE_CONNECTION_REPLACED) {
        lastError = `connection replaced by the server (close ${end.code}${end.reason ? ` ${end.reason.slice(0, 120)}` : ''}); not reconnecting`;
        ports.log('warning', `openagent: ${lastError}`);
        setPhase('unavailable');
        return;
      }
      if (lastError === undefined) lastError = `closed (${end.code}${end.reason ? ` ${end.reason.slice(0, 120)}` : ''})`;
      const wait = reconnectDelayMs(attempt);
      attempt += 1;
      nextRetryAt = Date.now() + wait;
      setPhase('unavailable');
      await delay(wait, { signal: stopping.signal }).catch(() => undefined);
    }
  }

  const looping = loop();

  return {
    status() {
      const catalog = sentCatalog ?? ports.catalog();
      return {
        phase,
        connected: session?.acknowledged === true,
        url: config.url,
        clientInstanceId: ports.instanceId,
        generation: ports.generation,
        activeCalls: active.size,
        ...(connectedAt === undefined ? {} : { connectedAt: new Date(connectedAt).toISOString() }),
        ...(nextRetryAt === undefined || phase !== 'unavailable' ? {} : { nextRetryAt: new Date(nextRetryAt).toISOString() }),
        ...(lastError === undefined ? {} : { lastError }),
        ...(closeCode === undefined ? {} : { closeCode }),
        catalog: { servers: catalog.servers.length, tools: catalog.servers.reduce((sum, server) => sum + server.tools.length, 0), dropped: catalog.dropped },
      };
    },
    catalogChanged: sendCatalogUpdate,
    async close() {
      if (stopping.signal.aborted) return looping;
      stopping.abort();
      abortAll('the OpenAgent channel was disabled');
      writer?.stop();
      socket?.close(1000, 'Capability channel stopped');
      const closing = socket;
      // A peer that never answers the close handshake is dropped.
      const drop = armDeadline({ timeoutMs: 2000 }, () => closing?.terminate());
      await Promise.allSettled([...running]);
      await looping;
      drop.clear();
    },
  };
}
