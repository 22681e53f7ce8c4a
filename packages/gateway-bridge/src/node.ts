// The Node.js-only entry (`@capnode/gateway-bridge/node`): the `ws` transport, identity files and the
// role factories over them. The root entry stays runtime-neutral.
export type { DeviceIdentityFile } from './connection/deviceIdentityFile.js';
export { loadOrCreateDeviceIdentity, createEphemeralDeviceIdentity } from './connection/deviceIdentityFile.js';
export type { WsSocketFactoryOptions } from './connection/wsSocket.js';
export { createWsSocketFactory, gatewayPlatform } from './connection/wsSocket.js';
export type { OperatorConnectionOptions } from './operator/operator.js';
export { OPERATOR_IDENTITY_FILE, connectGatewayOperator, findGatewayNode, listGatewayNodePairingRequests, approveGatewayNodePairing } from './operator/operator.js';
export type { GatewayNodeOptions } from './gatewayNode/gatewayNode.js';
export { GATEWAY_NODE_IDENTITY_FILE, createGatewayNode } from './gatewayNode/gatewayNode.js';
export type { GatewayChannelBridgeOptions } from './channel/gatewayChannelBridge.js';
export { createGatewayChannelBridge } from './channel/gatewayChannelBridge.js';
