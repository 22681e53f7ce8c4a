export type { GatewayErrorCode, GatewayErrorOptions } from './errors.js';
export { GatewayError, isGatewayError } from './errors.js';
export type { BackoffOptions } from './connection/backoff.js';
export { backoffDelay, DEFAULT_BACKOFF } from './connection/backoff.js';
export type { GatewaySocket, GatewaySocketHandlers, GatewaySocketFactory } from './connection/socket.js';
export type { DeviceIdentity, DeviceTokenStore } from './connection/identity.js';
export { createMemoryDeviceTokenStore } from './connection/identity.js';
export type {
  GatewayClientInfo,
  GatewayDeclaration,
  GatewayLogLevel,
  GatewayConnectionState,
  GatewayClientStatus,
  GatewayClientOptions,
  GatewayRequestOptions,
  GatewayClient,
} from './connection/clientContract.js';
export { createGatewayClient } from './connection/client.js';
export type { InvokeAdmission, InvokeSubmission, InvokeTicket, InvokeLedgerOptions, InvokeLedgerStats, InvokeLedger } from './gatewayNode/invokeLedger.js';
export { createInvokeLedger } from './gatewayNode/invokeLedger.js';
export type {
  GatewayNodePairingState,
  GatewayNodePairingRequest,
  GatewayNodePairingInspection,
  GatewayNodeStatus,
  GatewayNodeTransportOptions,
  GatewayNode,
} from './gatewayNode/gatewayNodeContract.js';
export { GATEWAY_NODE_BUSY_MESSAGE, gatewayNodeDeclaration, toInvokeResult, createGatewayNodeTransport } from './gatewayNode/gatewayNodeTransport.js';
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
} from './channel/channelContract.js';
export { CHANNEL_QUEUE_LIMIT, PENDING_APPROVAL_TTL_MS, PENDING_PERMISSION_TTL_MS, createChannelBridge, toConversation, firstText, messageAttachments } from './channel/channelBridge.js';
export { CHANNEL_TOOL_NAMES, createChannelCapability } from './channel/channelTools.js';
