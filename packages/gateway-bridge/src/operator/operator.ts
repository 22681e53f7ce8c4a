import { nodeListResultSchema, nodePairListResultSchema, type GatewayNodeEntry, type GatewayOperatorScope, type NodePairRequest } from '@capnode/protocol/gateway';
import { createGatewayClient } from '../connection/client.js';
import type { GatewayClient, GatewayClientOptions } from '../connection/clientContract.js';
import { loadOrCreateDeviceIdentity } from '../connection/deviceIdentityFile.js';
import type { GatewaySocketFactory } from '../connection/socket.js';
import { createWsSocketFactory, gatewayPlatform } from '../connection/wsSocket.js';
import { GatewayError } from '../errors.js';

/** File name of the operator identity (pairing look-ups and approvals) inside the host's config directory. */
export const OPERATOR_IDENTITY_FILE = 'gateway-operator.json';

export interface OperatorConnectionOptions {
  readonly url: string;
  readonly token?: string;
  readonly password?: string;
  /** Operator identity file (a different identity than the gateway node's; the gateway pairs roles separately). */
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

/** The gateway node `nodeId` as `node.list` shows it to an operator, or `undefined` when the gateway does not know it. */
export async function findGatewayNode(operator: GatewayClient, nodeId: string, options: { readonly signal?: AbortSignal } = {}): Promise<GatewayNodeEntry | undefined> {
  const payload = await operator.request('node.list', {}, options.signal ? { signal: options.signal } : {});
  const parsed = nodeListResultSchema.safeParse(payload);
  if (!parsed.success) throw new GatewayError('invalid_response', 'node.list answered with an unexpected shape', { cause: parsed.error });
  return parsed.data.nodes.find((node) => node.nodeId === nodeId);
}

/** Pending `node.pair.*` requests for `nodeId` (command approvals). */
export async function listGatewayNodePairingRequests(operator: GatewayClient, nodeId: string, options: { readonly signal?: AbortSignal } = {}): Promise<NodePairRequest[]> {
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
export async function approveGatewayNodePairing(operator: GatewayClient, nodeId: string, options: { readonly signal?: AbortSignal } = {}): Promise<NodePairRequest[]> {
  const pending = await listGatewayNodePairingRequests(operator, nodeId, options);
  for (const request of pending) {
    await operator.request('node.pair.approve', { requestId: request.requestId }, options.signal ? { signal: options.signal } : {});
  }
  return pending;
}
