import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

/** The bare (non-relative) specifiers of every module an entry loads, following relative imports. */
function bareImportsOf(entry: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] ?? '');
    modules.set(file, specifiers.filter((specifier) => !specifier.startsWith('.')));
    for (const specifier of specifiers) if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
  };
  visit(join(sourceDirectory, entry));
  return modules;
}

/** Asserts that every bare import of the entry's module graph passes `allowed`. */
function expectImports(entry: string, allowed: (specifier: string) => boolean): void {
  const graph = bareImportsOf(entry);
  expect(graph.size).toBeGreaterThan(0);
  for (const [file, specifiers] of graph) {
    for (const specifier of specifiers) expect(allowed(specifier), `${file} imports ${specifier}`).toBe(true);
  }
}

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
