export type { ProtocolFormatErrorCode, JsonRpcErrorObject } from './errors.js';
export { ProtocolFormatError, isProtocolFormatError, ProtocolError, isProtocolError, JsonRpcErrorCode } from './errors.js';
export type { RequestId, RequestIdKey, RequestIdLocation } from './requestId.js';
export {
  isRequestId,
  needsRawNumber,
  requestIdKey,
  requestIdKeyFromMessage,
  findRequestIdToken,
  extractRequestIdRaw,
} from './requestId.js';
export type { JsonTokenKind, JsonTokenSpan } from './internal/jsonScan.js';
export { isJsonNumberLexeme, normalizeJsonNumber } from './jsonNumber.js';
export type {
  CancellationTrackerOptions,
  CallRegistration,
  CancelOutcome,
  CancellationTrackerStats,
  CancellationTracker,
} from './cancellation.js';
export { createCancellationTracker } from './cancellation.js';
export { canonicalJson, argumentsHash } from './canonicalJson.js';
export { MAX_ARGUMENTS_DEPTH, exceedsJsonDepth } from './jsonDepth.js';
export { STDIO_RELAY_HEADER } from './stdioRelay.js';
