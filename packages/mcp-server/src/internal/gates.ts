import * as crypto from 'node:crypto';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** True for an IPv4 address in 127.0.0.0/8, `::1`, or an IPv4-mapped loopback (`::ffff:127.x.x.x`). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const lower = address.toLowerCase();
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  const v4 = lower.startsWith('::ffff:') ? lower.slice(7) : lower;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** True for a hostname or address this server may listen on (loopback only). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase() === 'localhost' || isLoopbackAddress(bare);
}

const BROWSER_HEADERS = ['origin', 'sec-fetch-site', 'referer', 'sec-fetch-dest', 'sec-fetch-user'] as const;

/**
 * The first header that marks a browser-originated request, if any: Origin, Referer, Sec-Fetch-Site,
 * Sec-Fetch-Dest, Sec-Fetch-User, or a Sec-Fetch-Mode other than a lone `cors`.
 *
 * Node's built-in `fetch` (undici, used by the MCP SDK clients, Claude Code and most Node tools) sends
 * `Sec-Fetch-Mode: cors` on every request and no other fetch-metadata header, while a browser that
 * sends Sec-Fetch-Mode always sends Sec-Fetch-Site with it (and Origin on a cross-origin POST). So a
 * lone `Sec-Fetch-Mode: cors` is let through; every browser request still has a refused header.
 */
export function browserHeader(headers: IncomingHttpHeaders): string | undefined {
  for (const name of BROWSER_HEADERS) if (headers[name] !== undefined) return name;
  const mode = headers['sec-fetch-mode'];
  if (mode !== undefined && mode !== 'cors') return 'sec-fetch-mode';
  return undefined;
}

const ALLOWED_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/** True when the Host header names this machine's loopback: 127.0.0.1, localhost or [::1], any port. */
export function isAllowedHost(host: string | undefined): boolean {
  return host !== undefined && ALLOWED_HOST.test(host);
}

type OneShotHash = (algorithm: string, data: string, outputEncoding: 'buffer') => Buffer;
/** `crypto.hash` (Node 20.12+) digests without building a Hash object per call. */
const oneShot = (crypto as { hash?: OneShotHash }).hash;

function digest(value: string): Buffer {
  return oneShot === undefined ? createHash('sha256').update(value, 'utf8').digest() : oneShot('sha256', value, 'buffer');
}

/**
 * Builds a bearer check for `token`: the scheme is matched case-insensitively and the credential is
 * compared in constant time over SHA-256 digests (equal lengths whatever was sent).
 */
export function createBearerCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    if (authorization === undefined) return false;
    const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(authorization);
    if (match === null || match[1]?.toLowerCase() !== 'bearer') return false;
    return timingSafeEqual(digest(match[2] as string), expected);
  };
}
