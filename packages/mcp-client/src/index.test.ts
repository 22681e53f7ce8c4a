import { describe, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/mcp-client entries', () => {
  it('the root entry is runtime-neutral: no Node built-ins, no undici, no stdio transport, never the server, host or gateway packages', () => {
    expectImports('index.ts', (specifier) => ['zod', '@capnode/toolkit', '@capnode/protocol', '@capnode/capabilities', '@modelcontextprotocol/client'].includes(specifier));
  });

  it('the /node entry never loads the server, host or gateway packages', () => {
    expectImports('node.ts', (specifier) => !/^@capnode\/(?:mcp-server|host|gateway-bridge)(?:\/|$)/.test(specifier) && !specifier.includes('/internal'));
  });

  it('the /redact entry needs neither Node nor the MCP SDK', () => {
    expectImports('redact.ts', (specifier) => specifier === 'zod' || specifier === '@capnode/toolkit' || specifier === '@capnode/capabilities');
  });

  it('the root entry exports exactly the documented runtime API', () =>
    expectExports('index.ts', [
      'CONTENT_LIMITS',
      'DEFAULT_CONNECT_TIMEOUT_SECS',
      'DEFAULT_MAX_RESPONSE_BYTES',
      'DEFAULT_TOOL_TIMEOUT_SECS',
      'HOST_MARKER_CAPABILITY',
      'MAX_BINARY_FILE_BYTES',
      'MAX_BINARY_ITEMS',
      'MAX_BINARY_TOTAL_BYTES',
      'MAX_CONTEXT_TEXT',
      'MAX_SERVER_PART',
      'MAX_TIMEOUT_SECS',
      'MAX_TOOL_NAME',
      'McpClientError',
      'NAME_SEPARATOR',
      'assignToolNames',
      'createMcpToolsSlot',
      'createPolicyHook',
      'createToolPolicy',
      'formatConfigIssues',
      'hostInstanceOf',
      'importMcpServers',
      'isMcpClientError',
      'normalizeRiskProfile',
      'parseMcpConfig',
      'resolveAgentGrant',
      'selfEntryReason',
      'toModelResult',
      'toServerPart',
      'validateMcpConfig',
      'wrapUntrusted',
    ]));

  it('the /node entry exports exactly the documented runtime API', () =>
    expectExports('node.ts', [
      'createMcpRuntime',
      'loginMcpServer',
      'oauthFileName',
    ]));

  it('the /redact entry exports exactly the documented runtime API', () =>
    expectExports('redact.ts', [
      'MAX_ERROR_TEXT',
      'REDACTED',
      'capText',
      'collectSecrets',
      'createSecretScrubber',
      'maskSecret',
      'redactConfig',
      'redactServerConfig',
      'scrubAndCap',
    ]));
});
