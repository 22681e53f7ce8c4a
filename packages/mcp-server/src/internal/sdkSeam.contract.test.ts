// The SDK seam of @capnode/mcp-server: every non-public member of the SDK `Server` that capnode uses
// lives in buildServer.ts. buildServer.ts leaves an instance as it is when such a member is missing
// (the server still works, only slower); this test is what fails instead, on an SDK upgrade that
// renames or reshapes one of them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Server } from '@modelcontextprotocol/server';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { SlotMap } from '@capnode/toolkit';
import { describe, expect, test } from 'vitest';
import { buildServer, requestEntry } from './buildServer.js';
import { BOUND_MODERN_REVISION } from './classify.js';

const require = createRequire(import.meta.url);
const manifest = require('../../package.json') as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

function plainServer(): Server {
  return new Server({ name: 'contract', version: '0.0.0' }, { capabilities: { tools: {} } });
}

function built(): Server {
  const invoker = createInvoker({ registry: createRegistry() });
  return buildServer({ serverInfo: { name: 'contract', version: '0.0.0' }, invoker, toolsList: () => ({ tools: [] }), onError: () => {} }, () => ({}) as never, false);
}

describe('the SDK members buildServer.ts relies on', () => {
  test('the MCP SDK packages are pinned to exact versions, and the installed one is the pinned one', () => {
    for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      if (name.startsWith('@modelcontextprotocol/')) expect(range, name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    const installed = JSON.parse(readFileSync(new URL('../../node_modules/@modelcontextprotocol/server/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(installed.version).toBe(manifest.dependencies['@modelcontextprotocol/server']);
  });

  test('_onrequest: the request entry on the prototype chain, taking (request, extra)', () => {
    const entry = (plainServer() as unknown as { _onrequest?: unknown })._onrequest;
    expect(typeof entry).toBe('function');
    expect((entry as (...args: unknown[]) => unknown).length).toBe(2);
    expect(requestEntry(built())).toBeTypeOf('function');
  });

  test('_requestHandlerAbortControllers: an own Map replaced by a SlotMap, also after _onclose', () => {
    expect((plainServer() as unknown as { _requestHandlerAbortControllers?: unknown })._requestHandlerAbortControllers).toBeInstanceOf(Map);
    const server = built() as unknown as { _requestHandlerAbortControllers: unknown; _onclose(): void };
    expect(server._requestHandlerAbortControllers).toBeInstanceOf(SlotMap);
    server._onclose();
    expect(server._requestHandlerAbortControllers).toBeInstanceOf(SlotMap);
  });

  test('_negotiatedProtocolVersion: an own field, unset until initialize, settable by the per-request binding', () => {
    const plain = plainServer() as unknown as Record<string, unknown>;
    expect(Object.hasOwn(plain, '_negotiatedProtocolVersion')).toBe(true);
    expect(plain._negotiatedProtocolVersion).toBeUndefined();
    const bound = buildServer(
      { serverInfo: { name: 'contract', version: '0.0.0' }, invoker: createInvoker({ registry: createRegistry() }), toolsList: () => ({ tools: [] }), onError: () => {} },
      () => ({}) as never,
      false,
      BOUND_MODERN_REVISION,
    ) as unknown as Record<string, unknown>;
    expect(bound._negotiatedProtocolVersion).toBe(BOUND_MODERN_REVISION);
  });

  test('_onclose and buildContext: overridable hooks on the prototype', () => {
    const proto = Server.prototype as unknown as Record<string, unknown>;
    expect(proto._onclose).toBeTypeOf('function');
    expect(proto.buildContext).toBeTypeOf('function');
  });
});
