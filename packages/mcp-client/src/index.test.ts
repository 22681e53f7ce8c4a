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

describe('@capnode/mcp-client entries', () => {
  it('the root entry is runtime-neutral: no Node built-ins, no undici, no stdio transport, never the server, host or gateway packages', () => {
    expectImports('index.ts', (specifier) => ['zod', '@capnode/protocol', '@capnode/capabilities', '@modelcontextprotocol/client'].includes(specifier));
  });

  it('the /node entry never loads the server, host or gateway packages', () => {
    expectImports('node.ts', (specifier) => !/^@capnode\/(?:mcp-server|host|gateway-bridge)(?:\/|$)/.test(specifier) && !specifier.includes('/internal'));
  });

  it('the /redact entry needs neither Node nor the MCP SDK', () => {
    expectImports('redact.ts', (specifier) => specifier === 'zod' || specifier === '@capnode/capabilities');
  });

  it('the root entry exports exactly the documented runtime API', async () => {
    const entry = await import('./index.js');
    expect(Object.keys(entry).sort()).toEqual([
      'CONTENT_LIMITS',
      'DEFAULT_CONNECT_TIMEOUT_SECS',
      'DEFAULT_MAX_RESPONSE_BYTES',
      'DEFAULT_TOOL_TIMEOUT_SECS',
      'MAX_BINARY_FILE_BYTES',
      'MAX_BINARY_ITEMS',
      'MAX_BINARY_TOTAL_BYTES',
      'MAX_CONTEXT_TEXT',
      'MAX_ERROR_TEXT',
      'MAX_SERVER_PART',
      'MAX_TIMEOUT_SECS',
      'MAX_TOOL_NAME',
      'McpClientError',
      'NAME_SEPARATOR',
      'REDACTED',
      'UPLOAD_EXTENSIONS',
      'assignToolNames',
      'capText',
      'collectSecrets',
      'createPolicyHook',
      'createSecretScrubber',
      'createToolPolicy',
      'defaultLogger',
      'estimateDecodedSize',
      'formatConfigIssues',
      'formatConfigPath',
      'importMcpServers',
      'isMcpClientError',
      'maskSecret',
      'mimeEssence',
      'normalizeRiskProfile',
      'parseMcpConfig',
      'redactConfig',
      'redactServerConfig',
      'resolveAgentGrant',
      'scrubAndCap',
      'sniffDocumentExtension',
      'sniffImageType',
      'toModelResult',
      'toServerPart',
      'validateMcpConfig',
      'wrapUntrusted',
    ]);
  });

  it('the /node entry exports exactly the documented runtime API', async () => {
    const entry = await import('./node.js');
    expect(Object.keys(entry).sort()).toEqual([
      'DEFAULT_CALLBACK_TIMEOUT_MS',
      'MAX_CA_FILE_BYTES',
      'MAX_OAUTH_FILE_BYTES',
      'createMcpRuntime',
      'createUploadStore',
      'loadCaBundle',
      'loginMcpServer',
      'oauthFileName',
    ]);
  });

  it('the /redact entry exports exactly the documented runtime API', async () => {
    const entry = await import('./redact.js');
    expect(Object.keys(entry).sort()).toEqual([
      'MAX_ERROR_TEXT',
      'REDACTED',
      'capText',
      'collectSecrets',
      'createSecretScrubber',
      'maskSecret',
      'redactConfig',
      'redactServerConfig',
      'scrubAndCap',
    ]);
  });
});
