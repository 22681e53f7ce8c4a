import { JsonRpcErrorCode } from '@capnode/protocol';
import { jsonRpcErrorReply, type HttpReply } from '@capnode/toolkit/http';
import { supportedProtocolVersions } from './versions.js';

/**
 * Every JSON-RPC error reply the MCP endpoint writes, each named by its code constant: the one place
 * the wire texts and codes of entry-level refusals live.
 */
export type Reply = HttpReply;
export { jsonReply, textReply, isResponse, toResponse } from '@capnode/toolkit/http';

const CLOSE = { connection: 'close' } as const;
const RETRY = { 'retry-after': '1' } as const;
const ALLOW_ALL = { allow: 'GET, POST, DELETE' } as const;

/** A JSON-RPC error reply with any code (the SDK's classification refusals carry their own). */
export const errorReply = jsonRpcErrorReply;

export const BAD_TARGET: Reply = jsonRpcErrorReply(
  400,
  JsonRpcErrorCode.InvalidRequest,
  'Bad Request: the request target must be a plain path (origin-form, no percent-escapes, backslashes, empty or dot segments)',
  undefined,
  null,
  CLOSE,
);

/** 413 for a body over `maxBodyBytes`; the Node listener also closes the connection (the rest is unread). */
export function payloadTooLarge(maxBodyBytes: number, close = true): Reply {
  return jsonRpcErrorReply(413, JsonRpcErrorCode.ServerError, `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`, undefined, null, close ? CLOSE : undefined);
}

export const BODY_UNREADABLE: Reply = jsonRpcErrorReply(400, JsonRpcErrorCode.ParseError, 'Parse error: the body could not be read', undefined, null, CLOSE);
export const PARSE_ERROR: Reply = jsonRpcErrorReply(400, JsonRpcErrorCode.ParseError, 'Parse error: the body is not valid JSON');
export const REQUEST_TIMEOUT: Reply = jsonRpcErrorReply(408, JsonRpcErrorCode.ServerError, 'Request Timeout: the request took too long', undefined, null, CLOSE);
export const UNSUPPORTED_MEDIA_TYPE: Reply = jsonRpcErrorReply(415, JsonRpcErrorCode.ServerError, 'Unsupported Media Type: Content-Type must be application/json');
export const SHUTTING_DOWN: Reply = jsonRpcErrorReply(503, JsonRpcErrorCode.InternalError, 'The server is shutting down.', undefined, null, RETRY);
export const SESSION_NOT_FOUND: Reply = jsonRpcErrorReply(404, JsonRpcErrorCode.SessionNotFound, 'Session not found: it ended or expired; initialize a new one.');
export const LEGACY_ONE_MESSAGE: Reply = jsonRpcErrorReply(400, JsonRpcErrorCode.InvalidRequest, 'Invalid Request: the HTTP+SSE transport takes one message per POST');
export const LEGACY_NOT_JSON_RPC: Reply = jsonRpcErrorReply(400, JsonRpcErrorCode.InvalidRequest, 'Invalid Request: the body is not a JSON-RPC message');

/** 500 with no internal detail; `id` echoes the request's when it is known. */
export function internalError(id: string | number | null = null): Reply {
  return jsonRpcErrorReply(500, JsonRpcErrorCode.InternalError, 'Internal server error', undefined, id);
}

export function batchTooLarge(maxBatch: number): Reply {
  return jsonRpcErrorReply(400, JsonRpcErrorCode.InvalidRequest, `Invalid Request: a batch may carry at most ${maxBatch} messages`);
}

/** The answer to a request naming a protocol version this server does not serve. */
export function unsupportedVersion(requested: string, id: string | number | null): Reply {
  const message = `Unsupported protocol version: ${requested} (supported: ${supportedProtocolVersions.join(', ')})`;
  return jsonRpcErrorReply(400, JsonRpcErrorCode.UnsupportedProtocolVersion, message, { supported: supportedProtocolVersions, requested }, id);
}

export function tooManySessions(maxSessions: number): Reply {
  return jsonRpcErrorReply(503, JsonRpcErrorCode.ServerError, `Too many sessions: all ${maxSessions} are in use; end one (DELETE) or retry later.`, undefined, null, RETRY);
}

/** 405 for a verb the endpoint does not serve. */
export function methodNotAllowed(method: string): Reply {
  return jsonRpcErrorReply(405, JsonRpcErrorCode.ServerError, `Method not allowed: ${method}`, undefined, null, ALLOW_ALL);
}

/** The answer to GET and DELETE on the MCP endpoint without sessions: no session, no standalone stream. */
export function noSessionReply(): Reply {
  return jsonRpcErrorReply(405, JsonRpcErrorCode.ServerError, 'Method not allowed: this endpoint serves JSON-RPC over POST and offers no SSE stream or session.', undefined, null, {
    allow: 'POST',
  });
}

/** The answer to GET (event stream) and DELETE without an `Mcp-Session-Id` when sessions are served. */
export function sessionIdRequired(): Reply {
  return jsonRpcErrorReply(
    405,
    JsonRpcErrorCode.ServerError,
    'Method not allowed: a GET event stream or a DELETE needs the Mcp-Session-Id of a session (from initialize); legacy SSE clients open GET /sse.',
    undefined,
    null,
    ALLOW_ALL,
  );
}
