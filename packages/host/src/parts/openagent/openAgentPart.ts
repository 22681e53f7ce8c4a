import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClientConnection, ClientEvent } from '@capnode/capabilities';
import type { HostContext } from '../../context/hostContext.js';
import type { Settings } from '../../config/settings.js';
import type { OpenAgentStatus } from '../../status/hostStatus.js';
import { runOpenAgentCall, type ExecuteCall } from './calls.js';
import { buildOpenAgentCatalog, type ImportedToolOrigin, type OpenAgentCatalog } from './catalog.js';
import { createOpenAgentChannel, type OpenAgentChannel } from './channel.js';
import { createEventQueue, toOpenAgentEvent } from './events.js';
import type { OpenAgentChannelConfig } from './channelTypes.js';
import { ledgerPrincipal, openIdempotencyLedger, type IdempotencyLedger } from './ledger.js';
import { createLedgerExecute } from './ledgerExecute.js';

export type { OpenAgentPhase, OpenAgentStatus } from '../../status/hostStatus.js';

/** How often a running host looks at settings.json for `openagent` and consent changes made by other processes (the CLI). */
const SETTINGS_POLL_MS = 1000;

/** OpenAgent settings given for one run (`capnode serve --openagent <url>`); not persisted, and the switch still decides. */
export interface OpenAgentOverride {
  readonly url?: string;
}

export interface OpenAgentPartOptions {
  readonly override?: OpenAgentOverride;
  /** Imported MCP tools by exposed command name, for their catalog servers, and news of their changes. */
  readonly imports?: { origins(): ReadonlyMap<string, ImportedToolOrigin>; subscribeOrigins(listener: () => void): () => void };
  /** Wraps each admitted call instead of the idempotency ledger (tests). */
  readonly execute?: ExecuteCall;
}

/** The host part serving OpenAgent's capability channel while `openagent.enabled` is on. */
export interface OpenAgentPart {
  /** Starts watching the settings and connects when the switch is on. */
  start(): void;
  /** Settings changed (the switch, URL, ids, consent): reconnect, update the catalog, or close. */
  apply(next: Settings): Promise<void>;
  status(): OpenAgentStatus;
  /**
   * The channel as the client connection of its calls: a `shell_completed` a session reports goes to the
   * server as `client_tool_event`, kept (≤ 1024) and resent on heartbeats until acknowledged.
   */
  readonly connection: ClientConnection;
  close(): Promise<void>;
}

/** The channel's config from the settings and the run's override, or why there is none. */
export function resolveOpenAgentConfig(settings: Settings, override: OpenAgentOverride | undefined): OpenAgentChannelConfig | string {
  const section = settings.openagent;
  const url = override?.url ?? section.url;
  const missing = [url === undefined ? 'openagent.url' : '', section.deviceId === undefined ? 'openagent.deviceId' : '', section.accountId === undefined ? 'openagent.accountId' : ''].filter(Boolean);
  if (missing.length > 0 || url === undefined || section.deviceId === undefined || section.accountId === undefined) return `set ${missing.join(', ')} in settings.json`;
  if (!/^wss?:\/\/[^\s/]+/i.test(url)) return `the OpenAgent URL '${url}' is not a ws:// or wss:// URL`;
  return {
    url,
    headers: section.headers,
    deviceId: section.deviceId,
    accountId: section.accountId,
    networkId: section.networkId,
    deviceLabel: section.deviceLabel ?? (hostname() || 'capnode'),
    heartbeatMs: section.heartbeatMs,
  };
}

const configKey = (settings: Settings, override: OpenAgentOverride | undefined) => JSON.stringify([settings.openagent, override?.url]);

export function createOpenAgentPart(context: HostContext, options: OpenAgentPartOptions = {}): OpenAgentPart {
  const { settings, pipeline } = context;
  const { log } = context.logging;
  const instanceId = randomUUID();
  let generation = 0;
  let channel: OpenAgentChannel | undefined;
  let config: OpenAgentChannelConfig | string | undefined;
  let appliedKey: string | undefined;
  let consentKey: string | undefined;
  let started = false;
  let closed = false;
  let poll: ReturnType<typeof setInterval> | undefined;
  let ledger: IdempotencyLedger | undefined;
  const events = createEventQueue();
  const connection = {
    id: `openagent:${instanceId}`,
    notify(event: ClientEvent) {
      if (event.type === 'shell_completed' && !closed) events.push(toOpenAgentEvent(event));
    },
  };
  let applying: Promise<void> = Promise.resolve();
  const unsubscribe = [pipeline.registry.subscribe(() => channel?.catalogChanged()), options.imports?.subscribeOrigins(() => channel?.catalogChanged())];

  // Built again only when what it is made of changed: the registry, consent, `openagent.servers`, imported origins.
  let cached: { key: string; catalog: OpenAgentCatalog; origins: unknown } | undefined;
  const catalog = (): OpenAgentCatalog => {
    const current = settings.get();
    const origins = options.imports?.origins();
    const key = JSON.stringify([pipeline.registry.version, current.consent, current.openagent.servers, origins ? origins.size : -1]);
    if (cached?.key === key && cached.origins === origins) return cached.catalog;
    const built = buildOpenAgentCatalog({ registry: pipeline.registry, consent: () => current.consent, servers: current.openagent.servers, ...(origins ? { imported: () => origins } : {}) });
    cached = { key, catalog: built, origins };
    return built;
  };

  async function reconcile(next: Settings): Promise<void> {
    if (closed || !started) return;
    const key = configKey(next, options.override);
    const consent = JSON.stringify(next.consent);
    if (key === appliedKey) {
      if (consent !== consentKey) {
        consentKey = consent;
        channel?.catalogChanged();
      }
      return;
    }
    appliedKey = key;
    consentKey = consent;
    const running = channel;
    channel = undefined;
    if (running) {
      await running.close();
      log('info', 'openagent: channel closed (settings changed)');
    }
    config = next.openagent.enabled ? resolveOpenAgentConfig(next, options.override) : undefined;
    if (typeof config === 'string') log('warning', `openagent: the channel is on but cannot connect: ${config}`);
    if (config === undefined || typeof config === 'string') return;
    generation += 1;
    const channelConfig = config;
    // Opened (and compacted) once per host, when the channel first starts.
    ledger ??= openIdempotencyLedger(context.paths.home);
    const execute = options.execute ?? createLedgerExecute(ledger, ledgerPrincipal(channelConfig.accountId, channelConfig.deviceId, channelConfig.networkId));
    channel = createOpenAgentChannel(channelConfig, {
      instanceId,
      generation,
      catalog,
      log,
      events,
      runCall: (frame, session) =>
        runOpenAgentCall(frame, session, {
          config: channelConfig,
          invoker: pipeline.invoker,
          catalog,
          consentOn: () => !closed && settings.get().openagent.enabled && channel !== undefined,
          log,
          execute,
          connection,
        }),
    });
  }

  const apply = (next: Settings) => {
    applying = applying.then(() => reconcile(next)).catch((error: unknown) => log('error', `openagent: ${(error as Error).message}`));
    return applying;
  };

  return {
    start() {
      if (started || closed) return;
      started = true;
      void apply(settings.get());
      poll = setInterval(() => {
        try {
          settings.consent.get(); // re-reads settings.json when another process changed it
        } catch {
          return; // an unreadable file is reported by the calls that need it
        }
        const current = settings.get();
        if (configKey(current, options.override) !== appliedKey || JSON.stringify(current.consent) !== consentKey) void apply(current);
      }, SETTINGS_POLL_MS);
      poll.unref?.();
    },
    apply,
    connection,
    status() {
      const current = settings.get().openagent;
      const base = { enabled: current.enabled, clientInstanceId: instanceId, generation: Math.max(generation, 1), ...(current.deviceId ? { deviceId: current.deviceId } : {}), ...(current.accountId ? { accountId: current.accountId } : {}) };
      if (channel) {
        const { phase, ...rest } = channel.status();
        const detail = phase === 'connected' || phase === 'active' ? `connected to ${rest.url} (${rest.activeCalls} calls running)` : phase === 'connecting' ? `connecting to ${rest.url}` : `not connected to ${rest.url}${rest.lastError ? `: ${rest.lastError}` : ''}`;
        return { ...base, ...rest, phase, detail };
      }
      const empty = { connected: false, activeCalls: 0, catalog: { servers: 0, tools: 0, dropped: 0 } };
      const url = options.override?.url ?? current.url;
      if (!current.enabled) return { ...base, ...empty, phase: 'disabled', ...(url ? { url } : {}), detail: 'OpenAgent client capabilities are off — run: capnode openagent enable' };
      if (typeof config === 'string') return { ...base, ...empty, phase: 'unavailable', ...(url ? { url } : {}), lastError: config, detail: `cannot connect: ${config}` };
      return { ...base, ...empty, phase: 'unavailable', ...(url ? { url } : {}), detail: started ? 'not started' : 'the host has not started' };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (poll) clearInterval(poll);
      for (const stop of unsubscribe) stop?.();
      await applying;
      await channel?.close();
      channel = undefined;
      ledger?.close();
    },
  };
}
