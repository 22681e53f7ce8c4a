import { ProtocolFormatError } from './errors.js';
import { findMemberToken, type JsonTokenSpan } from './internal/jsonScan.js';
import { isJsonNumberLexeme, normalizeJsonNumber } from './jsonNumber.js';

/** A JSON-RPC request id as `JSON.parse` delivers it. */
export type RequestId = string | number;

declare const requestIdKeyBrand: unique symbol;

/**
 * The identity of a JSON-RPC request id as a string, for use as a map key: `"s:<decoded string>"` for
 * string ids, `"n:<canonical number>"` (see {@link normalizeJsonNumber}) for numeric ids.
 *
 * String and numeric ids never share a key (`"1"` ≠ `1`), escaped spellings of one string share one
 * (`"\u0061"` = `"a"`), and numbers share one exactly when their values are equal (`1` = `1.0` = `10E-1`).
 */
export type RequestIdKey = string & { readonly [requestIdKeyBrand]: true };

/** Which id inside a JSON-RPC message: the message's own `id`, or `params.requestId` of `notifications/cancelled`. */
export type RequestIdLocation = 'id' | 'params.requestId';

const LOCATION_PATHS: Record<RequestIdLocation, readonly string[]> = {
  id: ['id'],
  'params.requestId': ['params', 'requestId'],
};

/**
 * True when `value` can be a parsed JSON-RPC request id: a string, or a number that is not NaN.
 * (`±Infinity` is what `JSON.parse` makes of an overflowing lexeme such as `1e400`; keying it needs the raw lexeme.)
 */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && !Number.isNaN(value));
}

/**
 * True when the parsed number `id` may not carry the value its lexeme spelled — it is not a safe
 * integer — so its key should come from the raw lexeme ({@link extractRequestIdRaw}).
 * Always false for strings and for the ordinary ids clients send (`0`, `1`, `42`, ...).
 */
export function needsRawNumber(id: RequestId): boolean {
  return typeof id === 'number' && !Number.isSafeInteger(id);
}

/**
 * The {@link RequestIdKey} of `id`.
 *
 * Pass `rawNumber`, the id's JSON lexeme, for a numeric id that {@link needsRawNumber}; the key is then
 * exact at any precision (`123456789012345678901234567890` does not collide with its neighbours that
 * share a double). Without it a numeric id is keyed by its double. Prefer {@link requestIdKeyFromMessage},
 * which applies that rule the same way for every message.
 *
 * @throws {ProtocolFormatError} `invalid_request_id` for a value that is not a request id, a `rawNumber`
 * given with a string id or not matching the number, or a non-finite number without its lexeme.
 */
export function requestIdKey(id: RequestId, rawNumber?: string): RequestIdKey {
  if (typeof id === 'string') {
    if (rawNumber !== undefined) {
      throw new ProtocolFormatError('invalid_request_id', 'A raw number lexeme was given for a string request id');
    }
    return `s:${id}` as RequestIdKey;
  }
  if (typeof id !== 'number' || Number.isNaN(id)) {
    throw new ProtocolFormatError('invalid_request_id', `Not a JSON-RPC request id: ${describe(id)}`);
  }
  if (rawNumber !== undefined) {
    if (!isJsonNumberLexeme(rawNumber) || Number(rawNumber) !== id) {
      throw new ProtocolFormatError(
        'invalid_request_id',
        `Raw lexeme ${JSON.stringify(rawNumber.slice(0, 40))} is not the JSON spelling of request id ${String(id)}`,
      );
    }
    return `n:${normalizeJsonNumber(rawNumber)}` as RequestIdKey;
  }
  if (Number.isSafeInteger(id)) return `n:${id}` as RequestIdKey;
  if (!Number.isFinite(id)) {
    throw new ProtocolFormatError('invalid_request_id', `Request id ${String(id)} needs its raw JSON lexeme to be keyed`);
  }
  return `n:${normalizeJsonNumber(String(id))}` as RequestIdKey;
}

/**
 * The {@link RequestIdKey} of an id parsed from `messageText`, reading the raw lexeme from the text
 * only when the parsed number {@link needsRawNumber} (so the common case does no scanning).
 *
 * Use this for every message, requests and `notifications/cancelled` alike, so that both sides of a
 * match are keyed by one rule. Falls back to the parsed value when the text has no matching lexeme at
 * `location` (for example a JSON-RPC batch).
 *
 * Numeric ids that parse to a safe integer are keyed by that integer: a lexeme with more than 15
 * significant digits that rounds to one (`1.00000000000000000001`) shares its key.
 *
 * @example
 * const message = JSON.parse(body);
 * const key = requestIdKeyFromMessage(message.params.requestId, body, 'params.requestId');
 */
export function requestIdKeyFromMessage(id: RequestId, messageText: string, location: RequestIdLocation = 'id'): RequestIdKey {
  if (!needsRawNumber(id)) return requestIdKey(id);
  const raw = extractRequestIdRaw(messageText, location);
  return requestIdKey(id, raw !== undefined && Number(raw) === id ? raw : undefined);
}

/**
 * Where the id at `location` sits in a JSON-RPC message text, found by a scan that builds no values;
 * `messageText.slice(start, end)` is its raw token (useful to splice the exact id into a response).
 * Keys match by decoded value and the last duplicate wins, as with `JSON.parse`.
 * `undefined` when the text is not an object with that member.
 */
export function findRequestIdToken(messageText: string, location: RequestIdLocation = 'id'): JsonTokenSpan | undefined {
  return findMemberToken(messageText, LOCATION_PATHS[location]);
}

/**
 * The raw number lexeme of the id at `location` in a JSON-RPC message text (`"123456789012345678901234567890"`),
 * or `undefined` when that id is absent or not a number.
 */
export function extractRequestIdRaw(messageText: string, location: RequestIdLocation = 'id'): string | undefined {
  const span = findRequestIdToken(messageText, location);
  if (span === undefined || span.kind !== 'number') return undefined;
  return messageText.slice(span.start, span.end);
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  return typeof value;
}
