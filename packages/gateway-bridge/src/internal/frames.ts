import { GATEWAY_PRE_CONNECT_MAX_BYTES, parseGatewayFrame, type GatewayFrame } from '@capnode/protocol/gateway';
import { GatewayError } from '../errors.js';
import { utf8Length } from './utf8.js';

/** Where a connection is, for its frame limit: 64 KiB before the handshake, `policy.maxPayload` after. */
export interface FrameBounds {
  readonly open: boolean;
  readonly maxPayload: number;
}

export function frameLimit(bounds: FrameBounds): number {
  return bounds.open ? bounds.maxPayload : GATEWAY_PRE_CONNECT_MAX_BYTES;
}

/** The text of an outgoing frame; throws `payload_too_large` past the limit, before anything is sent. */
export function encodeFrame(frame: object, bounds: FrameBounds): string {
  const text = JSON.stringify(frame);
  const limit = frameLimit(bounds);
  const bytes = utf8Length(text);
  if (bytes > limit) {
    throw new GatewayError(
      'payload_too_large',
      bounds.open
        ? `frame of ${bytes} bytes exceeds the gateway's maxPayload of ${limit} bytes`
        : `connect frame of ${bytes} bytes exceeds the ${limit}-byte limit before the handshake; declare fewer commands`,
    );
  }
  return text;
}

/** An incoming frame, or why it is dropped (binary, oversized, malformed). */
export function screenFrame(text: string | undefined, bytes: number, bounds: FrameBounds): { readonly ok: true; readonly frame: GatewayFrame } | { readonly ok: false; readonly reason: string } {
  const limit = frameLimit(bounds);
  if (text === undefined) return { ok: false, reason: `dropped a binary frame of ${bytes} bytes; the protocol is JSON text` };
  if (bytes > limit) return { ok: false, reason: `dropped a frame of ${bytes} bytes: more than the ${limit}-byte limit ${bounds.open ? '(policy.maxPayload)' : 'before the handshake'}` };
  const parsed = parseGatewayFrame(text);
  if (!parsed.ok) return { ok: false, reason: `dropped a malformed frame: ${parsed.reason}` };
  return { ok: true, frame: parsed.frame };
}
