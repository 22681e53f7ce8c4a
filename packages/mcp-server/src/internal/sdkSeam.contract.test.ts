// The SDK seam of @capnode/mcp-server: every non-public member of the SDK `Server` that capnode uses
// lives in buildServer.ts. buildServer.ts leaves an instance as it is when such a member is missing
// (the server still works, only slower); this test is what fails instead, on an SDK upgrade that
// renames or reshapes one of them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Server, type JSONRPCMessage, type JSONRPCRequest, type ServerContext, type Transport } from '@modelcontextprotocol/server';
import { createInvoker, createRegistry, defineCapability, defineCommand, json } from '@capnode/capabilities';
import { z } from 'zod';
import { SlotMap } from '@capnode/toolkit';
import { describe, expect, test, vi } from 'vitest';
import { ENVELOPE_META_KEYS, buildServer, directToolCall, requestEntry, type ServerWiring } from './buildServer.js';
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

const echo = defineCapability({
  category: 'contract',
  commands: [
    defineCommand({
      name: 'contract.echo',
      description: 'Echoes its text argument.',
      input: z.object({ text: z.string() }),
      execute: ({ text }) => (text === 'fail' ? Promise.reject(new Error('boom')) : text),
    }),
    defineCommand({
      name: 'contract.json',
      description: 'Answers structured content.',
      input: z.object({}),
      execute: () => json({ answer: 42, nested: { list: [1, 'two'] } }),
    }),
  ],
});

function echoWiring(): ServerWiring {
  return {
    serverInfo: { name: 'contract', version: '1.2.3' },
    invoker: createInvoker({ registry: createRegistry([echo]) }),
    toolsList: () => ({ tools: [] }),
    onError: () => {},
  };
}

/** A transport that records what the SDK sends. */
function recordingTransport(): Transport & { readonly sent: JSONRPCMessage[] } {
  const sent: JSONRPCMessage[] = [];
  return {
    sent,
    start: async () => {},
    close: async () => {},
    send: async (message: JSONRPCMessage) => {
      sent.push(message);
    },
  };
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': BOUND_MODERN_REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'contract-client', version: '1' },
};

/** tools/call params the direct entry must answer exactly as the SDK's entry does. */
const CALLS: ReadonlyArray<readonly [string, unknown]> = [
  ['a plain call', { name: 'contract.echo', arguments: { text: 'hi' } }],
  ['a progress token beside the envelope', { name: 'contract.echo', arguments: { text: 'hi' }, _meta: { ...ENVELOPE, progressToken: 7 } }],
  ['a log level in the envelope', { name: 'contract.echo', arguments: { text: 'hi' }, _meta: { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' } }],
  ['bad arguments', { name: 'contract.echo', arguments: { text: 5 }, _meta: ENVELOPE }],
  ['an unknown tool', { name: 'contract.none', arguments: {}, _meta: ENVELOPE }],
  ['a failing tool', { name: 'contract.echo', arguments: { text: 'fail' }, _meta: ENVELOPE }],
  ['structured content', { name: 'contract.json', arguments: {}, _meta: ENVELOPE }],
  ['params that are not an object', [1, 2]],
];

describe('the direct tools/call entry (directToolCall) against the SDK request entry', () => {
  test('_wireCodec, _outboundServerInfo and buildContext: the members it repeats the entry with', () => {
    const server = built() as unknown as Record<string, unknown> & { _wireCodec(): Record<string, unknown>; _outboundServerInfo(): unknown };
    expect(server._wireCodec).toBeTypeOf('function');
    expect(server._wireCodec().checkInboundEnvelope).toBeTypeOf('function');
    expect(server._wireCodec().encodeResult).toBeTypeOf('function');
    expect(server._outboundServerInfo()).toEqual({ name: 'contract', version: '0.0.0' });
  });

  test('lifts exactly the envelope keys the SDK lifts', async () => {
    const plain = plainServer();
    const seen: { envelope?: unknown; meta?: unknown } = {};
    plain.fallbackRequestHandler = async (_request, ctx: ServerContext) => {
      seen.envelope = ctx.mcpReq.envelope;
      seen.meta = ctx.mcpReq._meta;
      return {};
    };
    const reserved = Object.fromEntries(
      ['protocolVersion', 'clientInfo', 'clientCapabilities', 'logLevel', 'serverInfo', 'related-task', 'subscriptionId', 'traceparent', 'other'].map((key) => [`io.modelcontextprotocol/${key}`, key]),
    );
    (plain as unknown as { _onrequest(message: JSONRPCRequest): void })._onrequest({ jsonrpc: '2.0', id: 1, method: 'x/y', params: { _meta: { ...reserved, progressToken: 1 } } });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(Object.keys(seen.envelope as object).sort()).toEqual([...ENVELOPE_META_KEYS].sort());
    expect(Object.keys(seen.meta as object)).not.toContain(ENVELOPE_META_KEYS[0]);
  });

  for (const revision of [undefined, BOUND_MODERN_REVISION]) {
    test.each(CALLS)(`${revision ?? 'initialize era'}: %s is answered byte for byte as the SDK entry answers it, or left to it`, async (_label, params) => {
      const wiring = echoWiring();
      const viaEntry = buildServer(wiring, () => ({ transport: 'mcp-http', signal: new AbortController().signal, canStream: false, requestId: '1' }), false, revision);
      const transport = recordingTransport();
      await viaEntry.connect(transport);
      const request = { jsonrpc: '2.0', id: 1, method: 'tools/call', params } as JSONRPCRequest;
      requestEntry(viaEntry)?.(request, revision === undefined ? undefined : { classification: { era: 'modern', revision } });
      await vi.waitFor(() => expect(transport.sent).toHaveLength(1));

      const direct = buildServer(wiring, () => ({}) as never, false, revision);
      await direct.connect(recordingTransport());
      const served = directToolCall(wiring, direct)(request, { signal: new AbortController().signal, canStream: false, requestId: '1' });
      if ('error' in (transport.sent[0] as object)) {
        // The entry refused it (a 2026-07-28 call without its envelope): that answer is the entry's own.
        expect(served).toBeUndefined();
        return;
      }
      expect(served).toBeInstanceOf(Promise);
      const result = await served;
      expect(JSON.stringify({ result, jsonrpc: '2.0', id: 1 })).toBe(JSON.stringify(transport.sent[0]));
    });
  }

  test('leaves a refused envelope and a retry to the SDK entry', async () => {
    const wiring = echoWiring();
    const server = buildServer(wiring, () => ({}) as never, false, BOUND_MODERN_REVISION);
    const direct = directToolCall(wiring, server);
    const call = { signal: new AbortController().signal, canStream: false, requestId: '1' };
    const message = (params: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }) as JSONRPCRequest;
    expect(direct(message({ name: 'contract.echo', arguments: { text: 'x' } }), call)).toBeUndefined();
    expect(direct(message({ name: 'contract.echo', arguments: { text: 'x' }, _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 5 } }), call)).toBeUndefined();
    expect(direct(message({ name: 'contract.echo', arguments: { text: 'x' }, _meta: ENVELOPE, requestState: 'k' }), call)).toBeUndefined();
    expect(direct(message({ name: 'contract.echo', arguments: { text: 'x' }, _meta: ENVELOPE, inputResponses: {} }), call)).toBeUndefined();
  });

  test('remembers envelope checks by text without letting a refused envelope through', () => {
    const wiring = echoWiring();
    const direct = directToolCall(wiring, buildServer(wiring, () => ({}) as never, false, BOUND_MODERN_REVISION));
    const call = { signal: new AbortController().signal, canStream: false, requestId: '1' };
    const withMeta = (meta: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'contract.echo', arguments: { text: 'x' }, _meta: meta } }) as JSONRPCRequest;
    const bad = { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 5 };
    for (let round = 0; round < 3; round += 1) {
      expect(direct(withMeta(ENVELOPE), call)).toBeInstanceOf(Promise);
      expect(direct(withMeta(bad), call)).toBeUndefined();
    }
    // An overflowing number prints as null: such an envelope is checked afresh every time.
    const overflow = JSON.parse(`{"io.modelcontextprotocol/protocolVersion":"${BOUND_MODERN_REVISION}","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":1e400}}`);
    const asNull = { ...overflow, 'io.modelcontextprotocol/clientInfo': { name: 'c', version: null } };
    expect(direct(withMeta(asNull), call)).toBeUndefined();
    expect(direct(withMeta(overflow), call)).toBeUndefined();
  });
});
