import { PROTOCOL_VERSION_META_KEY, classifyInboundRequest, type InboundClassificationOutcome, type InboundHttpRequest } from '@modelcontextprotocol/server';

const FIRST_MODERN_VERSION = '2026-07-28';
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The SDK's per-request (2026-07-28) entry classifies and answers this POST itself. */
export interface ModernEntryRoute {
  readonly kind: 'modern-entry';
  readonly method: string;
}

/**
 * The era classification of one POST, as the SDK's `classifyInboundRequest` decides it.
 *
 * The common case — one well-formed JSON-RPC request or notification with no per-request `_meta`
 * envelope claim and no modern `MCP-Protocol-Version` header — is legacy-era by the SDK's rules and is
 * recognised here without the SDK's schema probes (which build and discard error objects on every
 * call). A single message that carries the claim or a modern header goes to the SDK's per-request
 * entry unclassified (`modern-entry`), which classifies it once and owns every answer on that path.
 * Everything else goes to the SDK classifier. One deliberate difference: numeric ids beyond the safe
 * integer range are accepted (the SDK's id schema refuses them), because capnode echoes ids exactly.
 */
export function classifyPost(inbound: InboundHttpRequest): InboundClassificationOutcome | ModernEntryRoute {
  const body = inbound.body;
  const header = inbound.protocolVersionHeader?.trim();
  if (isPlainObject(body)) {
    const { jsonrpc, id, method, params } = body;
    const claim = isPlainObject(params) && isPlainObject(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;
    const modernHeader = header !== undefined && header >= FIRST_MODERN_VERSION;
    if (claim || modernHeader) {
      if (typeof method === 'string' && method !== 'initialize') return { kind: 'modern-entry', method };
      return classifyInboundRequest(inbound);
    }
    const hasId = 'id' in body;
    let plain = jsonrpc === '2.0' && typeof method === 'string' && (!hasId || typeof id === 'string' || Number.isInteger(id));
    if (plain && params !== undefined) {
      if (!isPlainObject(params)) plain = false;
      else if (params._meta !== undefined && !isPlainObject(params._meta)) plain = false;
    }
    if (plain) for (const key in body) if (!REQUEST_KEYS.has(key)) plain = false;
    if (plain) {
      if (!hasId) return header === undefined ? { kind: 'legacy', reason: 'notification' } : { kind: 'legacy', reason: 'notification', requestedVersion: header };
      if (method === 'initialize') {
        const requested = (params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
        return typeof requested === 'string' ? { kind: 'legacy', reason: 'initialize', requestedVersion: requested } : { kind: 'legacy', reason: 'initialize' };
      }
      return header === undefined ? { kind: 'legacy', reason: 'no-claim' } : { kind: 'legacy', reason: 'no-claim', requestedVersion: header };
    }
  }
  return classifyInboundRequest(inbound);
}
