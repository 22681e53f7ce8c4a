import { describe, it } from 'vitest';
import { entrySurface } from '../../../tests/support/entrySurface.js';

const { expectImports, expectExports } = entrySurface(import.meta.url);

describe('@capnode/mcp-server entries', () => {
  it('the root entry is runtime-neutral: no Node built-ins, no HTTP stack, only the protocol and capabilities siblings', () => {
    expectImports('index.ts', (specifier) => specifier === '@capnode/protocol' || specifier === '@capnode/capabilities' || specifier === '@capnode/toolkit' || specifier === '@capnode/toolkit/http' || specifier === '@modelcontextprotocol/server');
  });

  it('the /node entry never loads the client, host or gateway packages', () => {
    expectImports('node.ts', (specifier) => !/^@capnode\/(?:mcp-client|host|gateway-bridge)(?:\/|$)/.test(specifier) && !specifier.includes('/internal'));
  });

  it('the /stdio entry loads no HTTP stack', () => {
    expectImports('stdio.ts', (specifier) => !specifier.startsWith('hono') && !specifier.startsWith('@hono/') && specifier !== 'node:http' && !/^@capnode\/(?:mcp-client|host|gateway-bridge)/.test(specifier));
  });

  it('the root entry exports exactly the documented runtime API', () =>
    expectExports('index.ts', [
      'FAILURE_META_KEY',
      'createCapnodeMcp',
      'supportedProtocolVersions',
      'toCallToolResult',
      'toMcpTool',
      'toolFailureCode',
    ]));

  it('the /node entry exports exactly the documented runtime API', () =>
    expectExports('node.ts', [
      'generateToken',
      'isInsecureTokenFileError',
      'limitYoungGenerationGrowth',
      'loadOrCreateToken',
      'rotateToken',
      'startHttpServer',
    ]));

  it('the /stdio entry exports exactly the documented runtime API', () =>
    expectExports('stdio.ts', [
      'serveStdio',
    ]));
});
