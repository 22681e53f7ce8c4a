import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson.js';
import { openAgentCanonicalJson } from './openAgentCanonical.js';

/**
 * Synchronous twin of `argumentsHash` for Node: hex SHA-256 of the UTF-8 canonical JSON of `value`.
 * Same result as the Web Crypto version, for callers that cannot await (audit hooks, sync ledgers).
 *
 * @throws {ProtocolFormatError} as `canonicalJson`.
 */
export function argumentsHashSync(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/**
 * OpenAgent's `arguments_sha256`: hex SHA-256 of the UTF-8 {@link openAgentCanonicalJson} of `args`,
 * the form `client_tool_call` frames carry and the idempotency ledger fingerprints.
 *
 * @throws {ProtocolFormatError} as `openAgentCanonicalJson`.
 */
export function openAgentArgumentsSha256(args: unknown): string {
  return createHash('sha256').update(openAgentCanonicalJson(args), 'utf8').digest('hex');
}
