import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

function importsOf(entry: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] ?? '');
    modules.set(file, specifiers);
    for (const specifier of specifiers) if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
  };
  visit(join(sourceDirectory, entry));
  return modules;
}

describe('@capnode/gateway-bridge entries', () => {
  it('the root entry is runtime-neutral: no Node built-ins, no ws', () => {
    for (const [file, specifiers] of importsOf('index.ts')) {
      for (const specifier of specifiers) {
        expect(specifier.startsWith('.') || specifier.startsWith('@capnode/') || specifier === 'zod', `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('the root entry exports the documented runtime API', async () => {
    const root = await import('./index.js');
    expect(Object.keys(root).sort()).toEqual([
      'CHANNEL_QUEUE_LIMIT',
      'CHANNEL_TOOL_NAMES',
      'DEFAULT_BACKOFF',
      'GatewayError',
      'NODE_BUSY_MESSAGE',
      'PENDING_APPROVAL_TTL_MS',
      'PENDING_PERMISSION_TTL_MS',
      'backoffDelay',
      'createChannelBridge',
      'createChannelCapability',
      'createGatewayClient',
      'createInvokeLedger',
      'createMemoryDeviceTokenStore',
      'createNodeTransport',
      'firstText',
      'isGatewayError',
      'messageAttachments',
      'nodeDeclaration',
      'toConversation',
      'toInvokeResult',
    ]);
  });
});
