import { describe, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/gateway-bridge entries', () => {
  it('the root entry is runtime-neutral: no Node built-ins, no ws', () => {
    expectImports('index.ts', (specifier) => specifier.startsWith('@capnode/') || specifier === 'zod');
  });

  it('the root entry exports the documented runtime API', () =>
    expectExports('index.ts', [
      'CHANNEL_QUEUE_LIMIT',
      'CHANNEL_TOOL_NAMES',
      'DEFAULT_BACKOFF',
      'GATEWAY_NODE_MCP_CALL_COMMAND',
      'GatewayError',
      'PENDING_APPROVAL_TTL_MS',
      'PENDING_PERMISSION_TTL_MS',
      'PLUGIN_SURFACE_DEFAULT_TTL_MS',
      'PLUGIN_SURFACE_REFRESH_MARGIN_MS',
      'PLUGIN_SURFACE_REFRESH_METHOD',
      'createChannelBridge',
      'createChannelCapability',
      'createGatewayClient',
      'createGatewayNodeTransport',
      'createMemoryDeviceTokenStore',
      'gatewayNodeDeclaration',
      'isGatewayError',
      'publishedToolNames',
      'toInvokeResult',
    ]));
});
