import type { Registry } from '@capnode/capabilities';
import { nodeInvokeCancelSchema, type GatewayEventFrame, type NodeInvokeResultParams } from '@capnode/protocol/gateway';
import { createGatewayClient } from '../connection/client.js';
import type { GatewayClient, GatewayClientOptions, GatewayDeclaration, GatewayLogLevel } from '../connection/clientContract.js';
import { gatewayCaps } from '../internal/gatewayCaps.js';
import { createInvokeDispatcher } from '../internal/invokeDispatch.js';
import { createPairingTracker } from '../internal/pairingTracker.js';
import { createInvokeLedger, type InvokeLedger } from './invokeLedger.js';
import { GATEWAY_NODE_MCP_CALL_COMMAND, createNodePublisher } from './nodePublisher.js';
import { createPluginSurfaces } from './pluginSurfaces.js';
import type { GatewayNode, GatewayNodeStatus, GatewayNodeTransportOptions } from './gatewayNodeContract.js';

export { GATEWAY_NODE_BUSY_MESSAGE, toInvokeResult } from '../internal/invokeDispatch.js';

/**
 * What a node declares to the gateway: every registry command except `localOnly` ones, and as caps
 * the OpenClaw families of their categories (camera, computer, location, screen, browser, canvas,
 * talk — `tts`/`stt` count as talk), in registration order. Categories without a family (system,
 * device, clipboard, …) send no cap; a category whose commands were all withheld sends none.
 * With `mcpTools`, also the `mcp.tools.call.v1` family (node-hosted MCP tools), whether or not any
 * tool is published yet, so publishing later needs no new approval.
 */
export function gatewayNodeDeclaration(registry: Registry, options: { readonly mcpTools?: boolean } = {}): GatewayDeclaration {
  const commands = registry.commands({ excludeLocalOnly: true });
  const names = commands.map((command) => command.name);
  return { caps: gatewayCaps(commands.map((command) => command.category)), commands: options.mcpTools ? [...names, GATEWAY_NODE_MCP_CALL_COMMAND] : names };
}

function sameDeclaration(a: GatewayDeclaration, b: GatewayDeclaration): boolean {
  return a.caps.length === b.caps.length && a.commands.length === b.commands.length && a.caps.every((cap, i) => cap === b.caps[i]) && a.commands.every((command, i) => command === b.commands[i]);
}

/**
 * Connects this machine to an OpenClaw gateway as a node (runtime-neutral core; the Node entry's
 * `createGatewayNode` wires `ws`, the identity file and the pairing inspector).
 *
 * Declares the registry's commands (without `localOnly` ones) and redeclares by reconnecting when
 * the registry changes; answers `node.invoke.request` through `invoker` (same approvals, policy and
 * audit as MCP) with `node.invoke.result`; honours the request's `timeoutMs` and `node.invoke.cancel`;
 * runs at most `maxConcurrent` invokes (more get "node busy, retry"); runs a repeated
 * `idempotencyKey` once, answering every delivery with the same result.
 */
export function createGatewayNodeTransport(options: GatewayNodeTransportOptions): GatewayNode {
  const { invoker, identity } = options;
  const registry = invoker.registry;
  const nodeId = identity.deviceId;
  const log = (level: GatewayLogLevel, message: string) => {
    try {
      options.onLog?.(level, message);
    } catch {
      // The logger's problem.
    }
  };
  const ledger = createInvokeLedger<NodeInvokeResultParams>({
    ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
    ...(options.rememberMs !== undefined ? { rememberMs: options.rememberMs } : {}),
  });
  const lifetime = new AbortController();
  const declare = () => gatewayNodeDeclaration(registry, { mcpTools: options.publications !== undefined });
  let declared = declare();
  // Exactly the names this connection declared: an invoke of anything else (a localOnly command, one
  // registered after the declaration, a case variant such as `System.Run`) is refused before the pipeline.
  let declaredNames: ReadonlySet<string> = new Set(declared.commands);
  let closed = false;
  // Assigned right below; the client reports status while it is being created.
  let client: GatewayClient | undefined;

  const status = (): GatewayNodeStatus => ({ nodeId, connection: client!.status(), declared, pairing: pairing.current, invocations: ledger.stats() });
  const emitStatus = () => {
    if (!client) return;
    try {
      options.onStatus?.(status());
    } catch {
      // The listener's problem.
    }
  };
  const pairing = createPairingTracker({ nodeId, inspect: options.inspectPairing, onPairingRequired: options.onPairingRequired, signal: lifetime.signal, log, changed: emitStatus });
  const publisher = options.publications
    ? createNodePublisher({ source: options.publications, client: () => client!, isConnected: () => client?.status().state === 'connected', closed: () => closed, log })
    : undefined;
  const surfaces = createPluginSurfaces({ client: () => client!, log });
  // The gateway issues hosted surface URLs (canvas) only in the hello of a connect whose caps it has
  // approved: after an approval during this connection, reconnect once so it issues them.
  let approvalReconnectFor: string | undefined;
  const surfacesAfterApproval = () => {
    const missing = surfaces.missing(declared.caps);
    const connId = surfaces.connId;
    if (closed || pairing.current.state !== 'approved' || missing.length === 0 || connId === undefined || approvalReconnectFor === connId) return;
    approvalReconnectFor = connId;
    log('info', `the gateway approved this node; reconnecting so it issues the ${missing.join(', ')} surface URL`);
    void ledger.idle(options.redeclareDrainMs ?? 30_000).then(() => {
      if (!closed && surfaces.connId === connId) client!.reconnect('approved: fetch hosted surface URLs');
    });
  };
  const dispatch = createInvokeDispatcher({
    nodeId,
    url: options.url,
    invoker,
    ledger,
    client: () => client!,
    declaredNames: () => declaredNames,
    ...(publisher ? { mcpTool: publisher.lookup } : {}),
    onInvoke: () => pairing.invoked(),
    emitStatus,
    closed: () => closed,
    log,
  });
  const onEvent = (event: GatewayEventFrame) => {
    switch (event.event) {
      case 'node.invoke.request':
        void dispatch.onInvokeRequest(event.payload);
        return;
      case 'node.invoke.cancel': {
        const parsed = nodeInvokeCancelSchema.safeParse(event.payload);
        if (parsed.success && ledger.cancel(parsed.data.invokeId)) log('info', `invoke ${parsed.data.invokeId} cancelled by the gateway`);
        return;
      }
      case 'node.pair.resolved':
        if (pairing.resolved(event.payload)) surfacesAfterApproval();
        return;
      default:
        return;
    }
  };
  const redeclarer = createRedeclarer({
    registry,
    declare,
    ledger,
    debounceMs: options.declarationDebounceMs ?? 200,
    drainMs: options.redeclareDrainMs ?? 30_000,
    declared: () => declared,
    closed: () => closed,
    log,
    reconnect: () => {
      pairing.reset();
      client!.reconnect('declaration changed');
    },
  });

  client = createGatewayClient({
    ...nodeClientOptions(options),
    declaration: () => {
      declared = declare();
      declaredNames = new Set(declared.commands);
      return declared;
    },
    onEvent,
    onStatus: (connection) => {
      pairing.connectionStatus(connection);
      emitStatus();
    },
    onConnected: (hello) => {
      surfaces.connected(hello);
      pairing.connected();
      publisher?.connected();
    },
  });
  const gateway = client;
  // The client's first status ('connecting') came while it was being created.
  emitStatus();
  const close = async () => {
    if (closed) return gateway.close();
    closed = true;
    lifetime.abort(new Error('the gateway node is closing'));
    redeclarer.close();
    publisher?.close();
    ledger.close();
    await gateway.close();
  };
  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener('abort', () => void close(), { once: true });
  return {
    nodeId,
    client: gateway,
    status,
    ready: (readyOptions) => gateway.ready(readyOptions),
    pluginSurfaceUrl: (surface) => surfaces.url(surface),
    freshPluginSurfaceUrl: (surface, surfaceOptions) => surfaces.fresh(surface, surfaceOptions),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The gateway client options of a node (client `node-host`, role `node`, no scopes). */
function nodeClientOptions(options: GatewayNodeTransportOptions): Omit<GatewayClientOptions, 'declaration' | 'onEvent' | 'onStatus' | 'onConnected'> {
  return {
    url: options.url,
    ...(options.token ? { token: options.token } : {}),
    ...(options.password ? { password: options.password } : {}),
    role: 'node',
    scopes: [],
    client: {
      id: 'node-host',
      mode: 'node',
      version: options.client.version,
      platform: options.client.platform,
      ...(options.client.deviceFamily ? { deviceFamily: options.client.deviceFamily } : {}),
      ...(options.client.displayName ? { displayName: options.client.displayName } : {}),
      ...(options.client.instanceId ? { instanceId: options.client.instanceId } : {}),
    },
    identity: options.identity,
    ...(options.deviceTokens ? { deviceTokens: options.deviceTokens } : {}),
    createSocket: options.createSocket,
    userAgent: `capnode-node/${options.client.version}`,
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.random ? { random: options.random } : {}),
    onLog: options.onLog ?? (() => {}),
  };
}

/**
 * Redeclares to the gateway (by reconnecting) when the registry's declarable commands change,
 * debounced, after running invokes finish (or `drainMs`).
 */
function createRedeclarer(context: {
  readonly registry: Registry;
  declare(): GatewayDeclaration;
  readonly ledger: InvokeLedger<NodeInvokeResultParams>;
  readonly debounceMs: number;
  readonly drainMs: number;
  declared(): GatewayDeclaration;
  closed(): boolean;
  log(level: GatewayLogLevel, message: string): void;
  reconnect(): void;
}): { close(): void } {
  const { registry, ledger, log } = context;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let redeclaring = false;
  const redeclare = async () => {
    timer = undefined;
    if (context.closed() || redeclaring) return;
    const next = context.declare();
    const declared = context.declared();
    if (sameDeclaration(next, declared)) return;
    redeclaring = true;
    try {
      if (ledger.stats().running > 0) {
        log('info', 'the capability set changed; redeclaring to the gateway once running invokes finish');
        await ledger.idle(context.drainMs);
      }
      if (context.closed()) return;
      const added = next.commands.filter((command) => !declared.commands.includes(command));
      log('info', `the capability set changed; reconnecting to declare ${next.commands.length} commands${added.length ? ` (new: ${added.join(', ')}; the gateway must approve them)` : ''}`);
      context.reconnect();
    } finally {
      redeclaring = false;
    }
  };
  const unsubscribe = registry.subscribe(() => {
    if (context.closed()) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void redeclare(), context.debounceMs);
    (timer as { unref?: () => void }).unref?.();
  });
  return {
    close() {
      unsubscribe();
      if (timer) clearTimeout(timer);
    },
  };
}
