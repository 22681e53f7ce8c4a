import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson.js';

/**
 * Synchronous twin of `argumentsHash` for Node: hex SHA-256 of the UTF-8 canonical JSON of `value`.
 * Same result as the Web Crypto version, for callers that cannot await (audit hooks, sync ledgers).
 *
 * @throws {ProtocolFormatError} as `canonicalJson`.
 */
export function argumentsHashSync(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
