import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectEntryImports } from '../../../tests/support/entrySurface.js';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

const expectImports = (entry: string, allowed: (specifier: string) => boolean): void =>
  expectEntryImports(join(sourceDirectory, entry), allowed);

describe('@capnode/mcp-server entries', () => {
  it('the root entry is runtime-neutral: no Node built-ins, no HTTP stack, only the protocol and capabilities siblings', () => {
    expectImports('index.ts', (specifier) => specifier === '@capnode/protocol' || specifier === '@capnode/capabilities' || specifier === '@modelcontextprotocol/server');
  });

  it('the /node entry never loads the client, host or gateway packages', () => {
    expectImports('node.ts', (specifier) => !/^@capnode\/(?:mcp-client|host|gateway-bridge)(?:\/|$)/.test(specifier) && !specifier.includes('/internal'));
  });

  it('the /stdio entry loads no HTTP stack', () => {
    expectImports('stdio.ts', (specifier) => !specifier.startsWith('hono') && !specifier.startsWith('@hono/') && specifier !== 'node:http' && !/^@capnode\/(?:mcp-client|host|gateway-bridge)/.test(specifier));
  });

  it('the root entry exports exactly the documented runtime API', async () => {
    const entry = await import('./index.js');
    expect(Object.keys(entry).sort()).toEqual([
      'FAILURE_META_KEY',
      'createCapnodeMcp',
      'supportedProtocolVersions',
      'toCallToolResult',
      'toMcpTool',
      'toolFailureCode',
    ]);
  });

  it('the /node entry exports exactly the documented runtime API', async () => {
    const entry = await import('./node.js');
    expect(Object.keys(entry).sort()).toEqual([
      'generateToken',
      'isInsecureTokenFileError',
      'limitYoungGenerationGrowth',
      'loadOrCreateToken',
      'rotateToken',
      'startHttpServer',
    ]);
  });

  it('the /stdio entry exports exactly the documented runtime API', async () => {
    const entry = await import('./stdio.js');
    expect(Object.keys(entry).sort()).toEqual([
      'serveStdio',
    ]);
  });
});
