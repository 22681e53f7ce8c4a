import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, classifyInboundRequest, type InboundClassificationOutcome, type InboundHttpRequest } from '@modelcontextprotocol/server';
import { isPlainObject } from '@capnode/toolkit';

const FIRST_MODERN_VERSION = '2026-07-28';
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** The SDK's per-request (2026-07-28) entry classifies and answers this POST itself. */
export interface ModernEntryRoute {
  readonly kind: 'modern-entry';
  readonly method: string;
}

/**
 * A well-formed per-request `tools/call` or `tools/list` of the revision capnode's long-lived modern
 * server is bound to, whose headers agree with its body: it can be served without the SDK's
 * per-request entry (see `isFastModernRequest`).
 */
export interface ModernFastRoute {
  readonly kind: 'modern-fast';
  readonly method: 'tools/call' | 'tools/list';
}

/** The per-request revision capnode serves on its long-lived modern server. */
export const BOUND_MODERN_REVISION = '2026-07-28';

/** A header value without surrounding spaces and tabs (most values have none, and are returned as they are). */
function headerValue(value: string | undefined): string | undefined {
  if (value === undefined || value.length === 0) return value;
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  if (first !== 0x20 && first !== 0x09 && last !== 0x20 && last !== 0x09) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * Whether a modern-claiming request is one the SDK's per-request entry would hand straight to its
 * server instance: exactly the four JSON-RPC members, a string or safe-integer id, `tools/call` or
 * `tools/list`, an envelope naming {@link BOUND_MODERN_REVISION} with client capabilities, and
 * `MCP-Protocol-Version`, `Mcp-Method` and (for `tools/call`) a plain `Mcp-Name` header that equal
 * the body's. Everything else, valid or not, is left to the SDK's entry, which owns those answers.
 * The envelope's schema is still checked by the SDK when the request is delivered.
 */
function fastModernMethod(body: Record<string, unknown>, inbound: InboundHttpRequest): ModernFastRoute['method'] | undefined {
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || (method !== 'tools/call' && method !== 'tools/list')) return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  for (const key in body) if (!REQUEST_KEYS.has(key)) return undefined;
  if (!isPlainObject(params) || !isPlainObject(params._meta)) return undefined;
  const meta = params._meta;
  if (meta[PROTOCOL_VERSION_META_KEY] !== BOUND_MODERN_REVISION || !isPlainObject(meta[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  if (headerValue(inbound.protocolVersionHeader) !== BOUND_MODERN_REVISION || headerValue(inbound.mcpMethodHeader) !== method) return undefined;
  const name = headerValue(inbound.mcpNameHeader);
  if (method === 'tools/list') return name === undefined ? method : undefined;
  return typeof params.name === 'string' && name === params.name && !name.startsWith('=?') ? method : undefined;
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
export function classifyPost(inbound: InboundHttpRequest): InboundClassificationOutcome | ModernEntryRoute | ModernFastRoute {
  const body = inbound.body;
  const header = inbound.protocolVersionHeader?.trim();
  if (isPlainObject(body)) {
    const { jsonrpc, id, method, params } = body;
    const claim = isPlainObject(params) && isPlainObject(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;
    const modernHeader = header !== undefined && header >= FIRST_MODERN_VERSION;
    if (claim || modernHeader) {
      if (typeof method === 'string' && method !== 'initialize') {
        const fast = fastModernMethod(body, inbound);
        return fast === undefined ? { kind: 'modern-entry', method } : { kind: 'modern-fast', method: fast };
      }
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
