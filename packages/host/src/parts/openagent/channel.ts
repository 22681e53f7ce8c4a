import { armDeadline, delay } from '@capnode/toolkit';
import { OPENAGENT_CLOSE_CONNECTION_REPLACED } from '@capnode/protocol/openagent';
import type WebSocket from 'ws';
import type { OpenAgentCatalog } from './catalog.js';
import type { ActiveCall, ChannelPorts, OpenAgentChannelConfig, OpenAgentChannelStatus } from './channelTypes.js';
import { flushEvents, openConnection, type ConnectionEnd, type LiveSession } from './connection.js';

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

const describeClose = (end: ConnectionEnd) => `close ${end.code}${end.reason ? ` ${end.reason.slice(0, 120)}` : ''}`;

/** Connects to `config.url` in the background and keeps the channel up until `close`. */
export function createOpenAgentChannel(config: OpenAgentChannelConfig, ports: ChannelPorts): OpenAgentChannel {
  const stopping = new AbortController();
  const active = new Map<string, ActiveCall>();
  const running = new Set<Promise<void>>();
  let phase: OpenAgentChannelStatus['phase'] = 'connecting';
  let socket: WebSocket | undefined;
  let session: LiveSession | undefined;
  let lastError: string | undefined;
  let closeCode: number | undefined;
  let connectedAt: number | undefined;
  let nextRetryAt: number | undefined;
  let sentCatalog: OpenAgentCatalog | undefined;
  const setPhase = (next: OpenAgentChannelStatus['phase']) => {
    if (phase === next) return;
    phase = next;
    ports.onChange?.();
  };

  function sendCatalogUpdate(): void {
    const current = session;
    if (!current?.acknowledged) return;
    const catalog = ports.catalog();
    if (sentCatalog && catalog.key === sentCatalog.key) return;
    sentCatalog = catalog;
    current.send({ type: 'capability_catalog_update', generation: ports.generation, servers: catalog.servers }).catch((error: unknown) => {
      ports.log('warning', `openagent: catalog update not sent: ${(error as Error).message}`);
    });
    ports.onChange?.();
  }

  const hooks = {
    active,
    attach(next: LiveSession | undefined, nextSocket: WebSocket | undefined) {
      session = next;
      socket = nextSocket;
      if (!next) connectedAt = undefined;
    },
    acknowledged(current: LiveSession) {
      lastError = undefined;
      connectedAt = Date.now();
      closeCode = undefined;
      setPhase(active.size > 0 ? 'active' : 'connected');
      ports.log('info', `openagent: connected to ${config.url} (instance ${ports.instanceId}, generation ${ports.generation})`);
      // A catalog that changed while the hello was on its way goes out now, and so do events kept meanwhile.
      if (current === session) sendCatalogUpdate();
      flushEvents(current, ports, () => current.terminate('an event could not be sent'));
    },
    error(message: string) {
      lastError ??= message;
    },
    offered(catalog: OpenAgentCatalog) {
      sentCatalog = catalog;
    },
    call(frame: Parameters<ChannelPorts['runCall']>[0], current: LiveSession) {
      const work = ports.runCall(frame, current).catch((error: unknown) => ports.log('error', `openagent: call ${frame.call_id} failed: ${(error as Error).message}`));
      running.add(work);
      void work.finally(() => running.delete(work));
    },
    changed(current: LiveSession) {
      if (current.acknowledged) setPhase(active.size > 0 ? 'active' : 'connected');
      ports.onChange?.();
    },
  };

  async function loop(): Promise<void> {
    const { default: WebSocketClass } = await import('ws');
    let attempt = 0;
    while (!stopping.signal.aborted) {
      setPhase('connecting');
      lastError = undefined;
      const end = await openConnection(WebSocketClass, config, ports, hooks);
      if (stopping.signal.aborted) return;
      closeCode = end.code;
      if (end.acknowledged) attempt = 0;
      if (end.code === OPENAGENT_CLOSE_CONNECTION_REPLACED) {
        lastError = `connection replaced by the server (${describeClose(end)}); not reconnecting`;
        ports.log('warning', `openagent: ${lastError}`);
        setPhase('unavailable');
        return;
      }
      lastError ??= `closed (${describeClose(end)})`;
      const wait = reconnectDelayMs(attempt);
      attempt += 1;
      nextRetryAt = Date.now() + wait;
      setPhase('unavailable');
      await delay(wait, { signal: stopping.signal }).catch(() => undefined);
    }
  }

  if (ports.events) {
    ports.events.onPush = () => {
      if (session) flushEvents(session, ports, () => session?.terminate('an event could not be sent'));
    };
  }

  const looping = loop().catch((error: unknown) => {
    lastError = (error as Error).message;
    setPhase('unavailable');
  });

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
      for (const call of active.values()) call.controller.abort('the OpenAgent channel was disabled');
      const closing = socket;
      closing?.close(1000, 'Capability channel stopped');
      // A peer that never answers the close handshake is dropped.
      const drop = armDeadline({ timeoutMs: 2000 }, () => closing?.terminate());
      await Promise.allSettled([...running]);
      await looping;
      drop.clear();
    },
  };
}
