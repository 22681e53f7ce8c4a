export type { GatewayErrorCode, GatewayErrorOptions } from './errors.js';
export { GatewayError, isGatewayError } from './errors.js';
export type { BackoffOptions } from './connection/backoff.js';
export { DEFAULT_BACKOFF } from './connection/backoff.js';
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
export type { InvokeLedgerStats } from './gatewayNode/invokeLedger.js';
export type {
  GatewayNodePairingState,
  GatewayNodePairingRequest,
  GatewayNodePairingInspection,
  GatewayNodeStatus,
  GatewayNodeTransportOptions,
  GatewayNode,
  GatewayNodeMcpTool,
  GatewayNodeSkill,
  GatewayNodePublications,
} from './gatewayNode/gatewayNodeContract.js';
export type { PublishedMcpTool } from './gatewayNode/nodePublisher.js';
export { GATEWAY_NODE_MCP_CALL_COMMAND, publishedToolNames } from './gatewayNode/nodePublisher.js';
export { gatewayNodeDeclaration, toInvokeResult, createGatewayNodeTransport } from './gatewayNode/gatewayNodeTransport.js';
export type { PluginSurfaceOptions } from './gatewayNode/pluginSurfaces.js';
export { PLUGIN_SURFACE_DEFAULT_TTL_MS, PLUGIN_SURFACE_REFRESH_MARGIN_MS, PLUGIN_SURFACE_REFRESH_METHOD } from './gatewayNode/pluginSurfaces.js';
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
export { CHANNEL_QUEUE_LIMIT, PENDING_APPROVAL_TTL_MS, PENDING_PERMISSION_TTL_MS, createChannelBridge } from './channel/channelBridge.js';
export { CHANNEL_TOOL_NAMES, createChannelCapability } from './channel/channelTools.js';
