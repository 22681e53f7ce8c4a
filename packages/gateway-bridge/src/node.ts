import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { nodeListResultSchema, nodePairListResultSchema, type GatewayNodeEntry, type GatewayOperatorScope, type NodePairRequest } from '@capnode/protocol/gateway';
import WebSocket from 'ws';
import { createGatewayClient } from './client.js';
import type { GatewayClient, GatewayClientOptions } from './clientContract.js';
import { loadOrCreateDeviceIdentity } from './deviceIdentityFile.js';
import { GatewayError } from './errors.js';
import { createChannelBridge } from './channelBridge.js';
import type { ChannelBridge, ChannelBridgeOptions } from './channelContract.js';
import { createNodeTransport } from './nodeTransport.js';
import type { GatewayNode, NodePairingInspection, NodeTransportOptions } from './nodeContract.js';
import type { GatewaySocketFactory } from './socket.js';

export type { DeviceIdentityFile } from './deviceIdentityFile.js';
export { loadOrCreateDeviceIdentity, createEphemeralDeviceIdentity } from './deviceIdentityFile.js';

/** File name of the node's device identity inside the host's config directory. */
export const NODE_IDENTITY_FILE = 'gateway-device.json';
/** File name of the operator identity (pairing look-ups and approvals) inside the host's config directory. */
export const OPERATOR_IDENTITY_FILE = 'gateway-operator.json';

const PAIRING_LOOKUP_ATTEMPTS = 10;
const PAIRING_LOOKUP_INTERVAL_MS = 300;

/** Hard cap on one incoming frame, above any gateway's `policy.maxPayload` seen (25 MiB). */
const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

export interface WsSocketFactoryOptions {
  /** Largest incoming frame `ws` buffers before closing with 1009. Default 64 MiB. */
  readonly maxPayload?: number;
  /** Deadline of the WebSocket opening handshake. Default 15 000 ms. */
  readonly handshakeTimeoutMs?: number;
}

/** A {@link GatewaySocketFactory} over the `ws` package (no compression, bounded frames). */
export function createWsSocketFactory(options: WsSocketFactoryOptions = {}): GatewaySocketFactory {
  return (url, handlers) => {
    const ws = new WebSocket(url, {
      maxPayload: options.maxPayload ?? DEFAULT_MAX_FRAME_BYTES,
      handshakeTimeout: options.handshakeTimeoutMs ?? 15_000,
      perMessageDeflate: false,
    });
    ws.on('open', () => handlers.onOpen());
    ws.on('message', (data, isBinary) => {
      const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      handlers.onMessage(isBinary ? undefined : buffer.toString('utf8'), buffer.length);
    });
    ws.on('close', (code, reason) => handlers.onClose(code, reason.toString('utf8')));
    ws.on('error', (error) => handlers.onError(error));
    return {
      send: (text) => ws.send(text),
      close: (code, reason) => ws.close(code, reason),
      terminate: () => ws.terminate(),
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
    };
  };
}

/** The platform and device family the gateway's command policy expects for this OS. */
export function gatewayPlatform(platform: NodeJS.Platform = process.platform): { readonly platform: string; readonly deviceFamily: string } {
  switch (platform) {
    case 'linux':
      return { platform: 'linux', deviceFamily: 'Linux' };
    case 'darwin':
      return { platform: 'macos', deviceFamily: 'Mac' };
    case 'win32':
      return { platform: 'windows', deviceFamily: 'Windows' };
    default:
      return { platform, deviceFamily: platform };
  }
}

export interface OperatorConnectionOptions {
  readonly url: string;
  readonly token?: string;
  readonly password?: string;
  /** Operator identity file (a different identity than the node's; the gateway pairs roles separately). */
  readonly identityPath: string;
  readonly scopes: readonly GatewayOperatorScope[];
  readonly version?: string;
  readonly signal?: AbortSignal;
  /** How long to wait for the handshake. Default 15 000 ms. */
  readonly timeoutMs?: number;
  readonly createSocket?: GatewaySocketFactory;
  readonly onLog?: GatewayClientOptions['onLog'];
}

/**
 * Connects an operator (client `cli`) with the identity at `identityPath` and waits for the
 * handshake. The caller closes the client. Rejects with the connect error when the gateway refuses
 * (e.g. `pairing_required` on a remote gateway until its owner approves this operator device).
 */
export async function connectGatewayOperator(options: OperatorConnectionOptions): Promise<GatewayClient> {
  const { identity, deviceTokens } = loadOrCreateDeviceIdentity(options.identityPath);
  const client = createGatewayClient({
    url: options.url,
    ...(options.token ? { token: options.token } : {}),
    ...(options.password ? { password: options.password } : {}),
    role: 'operator',
    scopes: options.scopes,
    client: { id: 'cli', mode: 'cli', version: options.version ?? '0.0.0', platform: gatewayPlatform().platform },
    identity,
    deviceTokens,
    createSocket: options.createSocket ?? createWsSocketFactory(),
    userAgent: `capnode-operator/${options.version ?? '0.0.0'}`,
    ...(options.onLog ? { onLog: options.onLog } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  try {
    await client.ready({ timeoutMs: options.timeoutMs ?? 15_000, ...(options.signal ? { signal: options.signal } : {}) });
    return client;
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** This node as `node.list` shows it to an operator, or `undefined` when the gateway does not know it. */
export async function findGatewayNode(operator: GatewayClient, nodeId: string, options: { readonly signal?: AbortSignal } = {}): Promise<GatewayNodeEntry | undefined> {
  const payload = await operator.request('node.list', {}, options.signal ? { signal: options.signal } : {});
  const parsed = nodeListResultSchema.safeParse(payload);
  if (!parsed.success) throw new GatewayError('invalid_response', 'node.list answered with an unexpected shape', { cause: parsed.error });
  return parsed.data.nodes.find((node) => node.nodeId === nodeId);
}

/** Pending `node.pair.*` requests for `nodeId` (command approvals). */
export async function listNodePairingRequests(operator: GatewayClient, nodeId: string, options: { readonly signal?: AbortSignal } = {}): Promise<NodePairRequest[]> {
  const payload = await operator.request('node.pair.list', {}, options.signal ? { signal: options.signal } : {});
  const parsed = nodePairListResultSchema.safeParse(payload);
  if (!parsed.success) throw new GatewayError('invalid_response', 'node.pair.list answered with an unexpected shape', { cause: parsed.error });
  return parsed.data.pending.filter((request) => request.nodeId === nodeId);
}

/**
 * Approves every pending command request of `nodeId` (what `capnode gateway pair` does). Needs an
 * operator with `operator.pairing` and, for commands such as `system.run`, `operator.admin`.
 * Returns the approved requests.
 */
export async function approveNodePairing(operator: GatewayClient, nodeId: string, options: { readonly signal?: AbortSignal } = {}): Promise<NodePairRequest[]> {
  const pending = await listNodePairingRequests(operator, nodeId, options);
  for (const request of pending) {
    await operator.request('node.pair.approve', { requestId: request.requestId }, options.signal ? { signal: options.signal } : {});
  }
  return pending;
}

export interface GatewayNodeOptions extends Omit<NodeTransportOptions, 'identity' | 'deviceTokens' | 'createSocket' | 'client' | 'inspectPairing'> {
  /** Node identity file; `join(home, NODE_IDENTITY_FILE)` beside the host settings. Created 0600 on first use. */
  readonly identityPath: string;
  /**
   * Operator identity used to look up this node's pending approval and surface its request id.
   * Default: `OPERATOR_IDENTITY_FILE` beside `identityPath`; `false` turns the look-up off.
   */
  readonly operatorIdentityPath?: string | false;
  readonly client?: Partial<NodeTransportOptions['client']>;
  readonly createSocket?: GatewaySocketFactory;
}

/**
 * Connects this machine to an OpenClaw gateway as a node, with the device identity kept at
 * `identityPath` and the `ws` transport. Returns at once; the node connects and reconnects in the
 * background (`status()`, `ready()`). Throws a {@link GatewayError} for a bad URL or identity file.
 *
 * @example
 * await using node = createGatewayNode({
 *   url: 'ws://127.0.0.1:18789', token, invoker: host.invoker,
 *   identityPath: join(host.paths.home, NODE_IDENTITY_FILE),
 *   onPairingRequired: (request) => console.error(request.message),
 * });
 */
export function createGatewayNode(options: GatewayNodeOptions): GatewayNode {
  const { identity, deviceTokens } = loadOrCreateDeviceIdentity(options.identityPath);
  const createSocket = options.createSocket ?? createWsSocketFactory();
  const platform = gatewayPlatform();
  const version = options.client?.version ?? '0.0.0';
  const operatorIdentityPath = options.operatorIdentityPath === undefined ? join(dirname(options.identityPath), OPERATOR_IDENTITY_FILE) : options.operatorIdentityPath;
  const inspectPairing = operatorIdentityPath
    ? async (nodeId: string, { signal }: { readonly signal: AbortSignal }): Promise<NodePairingInspection> => {
        const operator = await connectGatewayOperator({
          url: options.url,
          ...(options.token ? { token: options.token } : {}),
          ...(options.password ? { password: options.password } : {}),
          identityPath: operatorIdentityPath,
          scopes: ['operator.read', 'operator.pairing'],
          version,
          signal,
          createSocket,
          ...(options.onLog ? { onLog: (level, message) => options.onLog!(level === 'info' ? 'debug' : level, `pairing look-up: ${message}`) } : {}),
        });
        try {
          // The gateway files the approval request just after the handshake; look again briefly for its id.
          for (let attempt = 0; ; attempt += 1) {
            const entry = await findGatewayNode(operator, nodeId, { signal });
            if (!entry) return { state: 'unknown' };
            if (entry.pendingRequestId) return { state: 'pending', requestId: entry.pendingRequestId, ...(entry.pendingDeclaredCommands ? { commands: entry.pendingDeclaredCommands } : {}) };
            if (entry.approvalState === 'approved') return { state: 'approved' };
            if (entry.approvalState !== 'pending-approval') return { state: 'unknown' };
            if (attempt >= PAIRING_LOOKUP_ATTEMPTS) return { state: 'pending' };
            await delay(PAIRING_LOOKUP_INTERVAL_MS, undefined, { signal });
          }
        } finally {
          await operator.close();
        }
      }
    : undefined;
  return createNodeTransport({
    ...options,
    identity,
    deviceTokens,
    createSocket,
    client: {
      version,
      platform: options.client?.platform ?? platform.platform,
      deviceFamily: options.client?.deviceFamily ?? platform.deviceFamily,
      displayName: options.client?.displayName ?? hostname(),
      ...(options.client?.instanceId ? { instanceId: options.client.instanceId } : {}),
    },
    ...(inspectPairing ? { inspectPairing } : {}),
  });
}

export interface GatewayChannelBridgeOptions extends Omit<ChannelBridgeOptions, 'identity' | 'deviceTokens' | 'createSocket'> {
  /** Operator identity file; `join(home, OPERATOR_IDENTITY_FILE)` beside the host settings. */
  readonly identityPath: string;
  readonly createSocket?: GatewaySocketFactory;
}

/**
 * The channel bridge over `ws` with the operator identity at `identityPath` (what `capnode mcp channel`
 * serves through {@link createChannelCapability}). Returns at once; tools wait for readiness.
 *
 * @example
 * await using bridge = createGatewayChannelBridge({ url, token, identityPath: join(home, OPERATOR_IDENTITY_FILE) });
 * const registry = createRegistry([createChannelCapability(bridge)]);
 */
export function createGatewayChannelBridge(options: GatewayChannelBridgeOptions): ChannelBridge {
  const { identity, deviceTokens } = loadOrCreateDeviceIdentity(options.identityPath);
  return createChannelBridge({
    ...options,
    identity,
    deviceTokens,
    createSocket: options.createSocket ?? createWsSocketFactory(),
    client: { platform: gatewayPlatform().platform, ...options.client },
  });
}
