import { defineBrandedErrorClass, defineErrorClass } from '@capnode/toolkit';

/**
 * The one local error class of `@capnode/protocol`: a caller handed in a value that has no wire form
 * (a malformed number lexeme, a cycle, a function, a non-finite number, ...).
 *
 * It never crosses a wire; map it to a {@link ProtocolError} (usually `InvalidParams`) at the boundary.
 */
export class ProtocolFormatError extends defineErrorClass('ProtocolFormatError', [
  'invalid_number_lexeme',
  'invalid_request_id',
  'unserializable_value',
  'cyclic_value',
  'too_deep',
]) {}

/** Machine-readable reasons a value cannot be turned into one of this package's wire formats. */
export type ProtocolFormatErrorCode = ProtocolFormatError['code'];

/** True when `value` is a {@link ProtocolFormatError}, across package copies and bundles. */
export function isProtocolFormatError(value: unknown): value is ProtocolFormatError {
  return ProtocolFormatError.is(value);
}

/**
 * JSON-RPC 2.0 error codes, plus the MCP-specific codes the MCP TypeScript SDK 2.x emits
 * (same numbers as its `ProtocolErrorCode`).
 */
export const JsonRpcErrorCode = {
  /** The body is not valid JSON. */
  ParseError: -32700,
  /** The JSON is not a valid request object (e.g. a non-object root). */
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** JSON-RPC implementation-defined server error: capnode's HTTP refusals (size, media type, verb, timeout, capacity). */
  ServerError: -32000,
  /** MCP Streamable HTTP: the `Mcp-Session-Id` names no open session (HTTP 404). */
  SessionNotFound: -32001,
  /** MCP: resource not found (received from older peers; current SDKs answer `InvalidParams`). */
  ResourceNotFound: -32002,
  /** MCP 2026-07-28: a header disagrees with the body (HTTP 400). */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability the client did not declare. */
  MissingRequiredClientCapability: -32021,
  /** MCP: the requested protocol version is not supported; `data` is `{ supported: string[], requested: string }`. */
  UnsupportedProtocolVersion: -32022,
  /** MCP: the tool needs URL-mode elicitation first. */
  UrlElicitationRequired: -32042,
} as const;

/** One of the well-known {@link JsonRpcErrorCode} values. */
export type JsonRpcErrorCode = (typeof JsonRpcErrorCode)[keyof typeof JsonRpcErrorCode];

/** The `error` member of a JSON-RPC 2.0 error response. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * An error meant to cross a wire as a JSON-RPC error object.
 *
 * Its `message` and `data` are sent to the remote caller verbatim, so build it only from text that is
 * safe to show; `cause` stays local. The shape (`code`, `message`, `data`) matches the MCP SDK's own
 * `ProtocolError`, so the SDK serialises one thrown from a request handler with the same code.
 *
 * @example
 * throw new ProtocolError(JsonRpcErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version: 2099-01-01', {
 *   supported: ['2025-03-26', '2025-06-18'],
 *   requested: '2099-01-01',
 * });
 */
export class ProtocolError extends defineBrandedErrorClass('ProtocolError') {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown, options?: { cause?: unknown }) {
    if (!Number.isSafeInteger(code)) throw new TypeError(`ProtocolError code must be an integer, got ${String(code)}`);
    super(message, options);
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC error object for this error: `code`, `message`, and `data` when present. Never the stack or cause. */
  toJsonRpcError(): JsonRpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** True when `value` is a {@link ProtocolError}, across copies and bundles of this package (the MCP SDK's own `ProtocolError` is not one). */
export function isProtocolError(value: unknown): value is ProtocolError {
  return ProtocolError.is(value);
}
