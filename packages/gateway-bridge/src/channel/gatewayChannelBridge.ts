import { loadOrCreateDeviceIdentity } from '../connection/deviceIdentityFile.js';
import type { GatewaySocketFactory } from '../connection/socket.js';
import { createWsSocketFactory, gatewayPlatform } from '../connection/wsSocket.js';
import { createChannelBridge } from './channelBridge.js';
import type { ChannelBridge, ChannelBridgeOptions } from './channelContract.js';

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
