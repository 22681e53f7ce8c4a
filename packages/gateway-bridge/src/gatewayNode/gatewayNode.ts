import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { loadOrCreateDeviceIdentity } from '../connection/deviceIdentityFile.js';
import type { GatewaySocketFactory } from '../connection/socket.js';
import { createWsSocketFactory, gatewayPlatform } from '../connection/wsSocket.js';
import { OPERATOR_IDENTITY_FILE, connectGatewayOperator, findGatewayNode } from '../operator/operator.js';
import type { GatewayNode, GatewayNodePairingInspection, GatewayNodeTransportOptions } from './gatewayNodeContract.js';
import { createGatewayNodeTransport } from './gatewayNodeTransport.js';

/** File name of the gateway node's device identity inside the host's config directory. */
export const GATEWAY_NODE_IDENTITY_FILE = 'gateway-device.json';

const PAIRING_LOOKUP_ATTEMPTS = 10;
const PAIRING_LOOKUP_INTERVAL_MS = 300;

export interface GatewayNodeOptions extends Omit<GatewayNodeTransportOptions, 'identity' | 'deviceTokens' | 'createSocket' | 'client' | 'inspectPairing'> {
  /** Gateway node identity file; `join(home, GATEWAY_NODE_IDENTITY_FILE)` beside the host settings. Created 0600 on first use. */
  readonly identityPath: string;
  /**
   * Operator identity used to look up this gateway node's pending approval and surface its request id.
   * Default: `OPERATOR_IDENTITY_FILE` beside `identityPath`; `false` turns the look-up off.
   */
  readonly operatorIdentityPath?: string | false;
  readonly client?: Partial<GatewayNodeTransportOptions['client']>;
  readonly createSocket?: GatewaySocketFactory;
}

/**
 * Connects this machine to an OpenClaw gateway as a gateway node, with the device identity kept at
 * `identityPath` and the `ws` transport. Returns at once; the gateway node connects and reconnects in the
 * background (`status()`, `ready()`). Throws a {@link GatewayError} for a bad URL or identity file.
 *
 * @example
 * await using node = createGatewayNode({
 *   url: 'ws://127.0.0.1:18789', token, invoker: host.invoker,
 *   identityPath: join(host.paths.home, GATEWAY_NODE_IDENTITY_FILE),
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
    ? async (nodeId: string, { signal }: { readonly signal: AbortSignal }): Promise<GatewayNodePairingInspection> => {
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
  return createGatewayNodeTransport({
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
