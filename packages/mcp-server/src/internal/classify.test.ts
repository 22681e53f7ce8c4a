import { classifyInboundRequest, type InboundHttpRequest } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { classifyPost } from './classify.js';

const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
};

const cases: Array<[string, InboundHttpRequest]> = [
  ['request', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }],
  ['request with string id and params', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'a', arguments: {} } } }],
  ['request with progress token', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 3 } } } }],
  ['request with legacy header', { httpMethod: 'POST', protocolVersionHeader: '2025-06-18', body: { jsonrpc: '2.0', id: 1, method: 'ping' } }],
  ['request with unknown old header', { httpMethod: 'POST', protocolVersionHeader: '1999-01-01', body: { jsonrpc: '2.0', id: 1, method: 'ping' } }],
  ['initialize', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'c', version: '1' } } } }],
  ['initialize without version', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } }],
  ['notification', { httpMethod: 'POST', body: { jsonrpc: '2.0', method: 'notifications/initialized' } }],
  ['notification with header', { httpMethod: 'POST', protocolVersionHeader: '2025-11-25', body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } } }],
  ['modern request', { httpMethod: 'POST', protocolVersionHeader: '2026-07-28', body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } } }],
  ['modern header without claim', { httpMethod: 'POST', protocolVersionHeader: '2026-07-28', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }],
  ['claim without header', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } } }],
  ['modern notification by header', { httpMethod: 'POST', protocolVersionHeader: '2026-07-28', body: { jsonrpc: '2.0', method: 'notifications/initialized' } }],
  ['initialize with modern claim', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: envelope } } }],
  ['initialize with malformed claim', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } } }],
  ['malformed claim', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } } }],
  ['wrong jsonrpc', { httpMethod: 'POST', body: { jsonrpc: '1.0', id: 1, method: 'ping' } }],
  ['extra member', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'ping', extra: true } }],
  ['array params', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] } }],
  ['null id', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: null, method: 'ping' } }],
  ['fractional id', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1.5, method: 'ping' } }],
  ['non-string method', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, method: 5 } }],
  ['response', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1, result: {} } }],
  ['batch', { httpMethod: 'POST', body: [{ jsonrpc: '2.0', id: 1, method: 'ping' }] }],
  ['empty batch', { httpMethod: 'POST', body: [] }],
  ['number root', { httpMethod: 'POST', body: 5 }],
  ['null root', { httpMethod: 'POST', body: null }],
  ['modern tools/call with agreeing headers', { httpMethod: 'POST', ...callHeaders('echo'), body: call('echo') }],
  ['modern tools/call, Mcp-Name disagrees', { httpMethod: 'POST', ...callHeaders('other'), body: call('echo') }],
  ['modern tools/list', { httpMethod: 'POST', protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/list', body: list() }],
];

function call(name: string): unknown {
  return { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {}, _meta: envelope } };
}

function list(): unknown {
  return { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: envelope } };
}

function callHeaders(name: string): Pick<InboundHttpRequest, 'protocolVersionHeader' | 'mcpMethodHeader' | 'mcpNameHeader'> {
  return { protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', mcpNameHeader: name };
}

describe('classifyPost', () => {
  it.each(cases)('agrees with the SDK classifier: %s', (_name, inbound) => {
    const sdk = classifyInboundRequest(inbound);
    const ours = classifyPost(inbound);
    if (ours.kind === 'modern-fast') {
      expect(sdk).toMatchObject({ kind: 'modern', classification: { era: 'modern', revision: '2026-07-28' } });
    } else if (ours.kind === 'modern-entry') {
      // Left to the SDK's per-request entry, which classifies it itself: never a legacy-era message.
      expect(sdk.kind).not.toBe('legacy');
      expect(ours.method).toBe((inbound.body as { method: string }).method);
    } else expect(ours).toEqual(sdk);
  });

  it('takes only well-formed tools/call and tools/list whose headers agree with the body the fast way', () => {
    const route = (inbound: Omit<InboundHttpRequest, 'httpMethod'>) => classifyPost({ httpMethod: 'POST', ...inbound }).kind;
    expect(route({ ...callHeaders('echo'), body: call('echo') })).toBe('modern-fast');
    expect(route({ ...callHeaders(' echo\t'), body: call('echo') })).toBe('modern-fast');
    expect(route({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/list', body: list() })).toBe('modern-fast');
    expect(route({ ...callHeaders('other'), body: call('echo') })).toBe('modern-entry');
    expect(route({ ...callHeaders('=?base64?ZWNobw==?='), body: call('echo') })).toBe('modern-entry');
    expect(route({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', body: call('echo') })).toBe('modern-entry');
    expect(route({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/list', mcpNameHeader: 'x', body: list() })).toBe('modern-entry');
    expect(route({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/list', body: { ...(list() as object), extra: 1 } })).toBe('modern-entry');
    expect(route({ mcpMethodHeader: 'tools/list', body: list() })).toBe('modern-entry');
    expect(route({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'ping', body: list() })).toBe('modern-entry');
    const noCapabilities = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } };
    expect(route({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/list', body: noCapabilities })).toBe('modern-entry');
  });

  it('accepts numeric ids beyond the safe integer range, which capnode echoes exactly', () => {
    const inbound: InboundHttpRequest = { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 1.2345678901234568e29, method: 'ping' } };
    expect(classifyPost(inbound)).toEqual({ kind: 'legacy', reason: 'no-claim' });
  });
});
