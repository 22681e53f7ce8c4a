export type { GatewayErrorCode, GatewayErrorOptions } from './errors.js';
export { GatewayError, isGatewayError } from './errors.js';
export type { BackoffOptions } from './backoff.js';
export { DEFAULT_BACKOFF } from './backoff.js';
export type { GatewaySocket, GatewaySocketHandlers, GatewaySocketFactory } from './socket.js';
export type { DeviceIdentity, DeviceTokenStore } from './identity.js';
export { createMemoryDeviceTokenStore } from './identity.js';
export type {
  GatewayClientInfo,
  GatewayDeclaration,
  GatewayLogLevel,
  GatewayConnectionState,
  GatewayClientStatus,
  GatewayClientOptions,
  GatewayRequestOptions,
  GatewayClient,
} from './clientContract.js';
export { createGatewayClient } from './client.js';
export type { InvokeLedgerStats } from './invokeLedger.js';
export type {
  NodePairingState,
  NodePairingRequest,
  NodePairingInspection,
  GatewayNodeStatus,
  NodeTransportOptions,
  GatewayNode,
} from './nodeContract.js';
export { nodeDeclaration, toInvokeResult, createNodeTransport } from './nodeTransport.js';
export type {
  ChannelConversation,
  ChannelEvent,
  ChannelEventFilter,
  ChannelEventGap,
  PendingGatewayApproval,
  GatewayApprovalDecision,
  ChannelNotification,
  ChannelBridgeOptions,
  ChannelBridge,
} from './channelContract.js';
export { CHANNEL_QUEUE_LIMIT, PENDING_APPROVAL_TTL_MS, PENDING_PERMISSION_TTL_MS, createChannelBridge } from './channelBridge.js';
export { CHANNEL_TOOL_NAMES, createChannelCapability } from './channelTools.js';
