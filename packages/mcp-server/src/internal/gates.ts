import type { IncomingHttpHeaders } from 'node:http';

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

/**
 * Whether `candidate` equals `expected`, two strings of the same length, in time that depends only on
 * that length: every code unit is compared, the differences are OR-ed together and nothing leaves the
 * loop early. No buffer, digest or native call per request (the native route cost more than the
 * rest of the gate chain together).
 */
function sameLengthEqual(candidate: string, expected: string): boolean {
  let difference = 0;
  for (let index = 0; index < expected.length; index += 1) difference |= candidate.charCodeAt(index) ^ expected.charCodeAt(index);
  return difference === 0;
}

/**
 * Builds a constant-time comparison against `secret` ({@link sameLengthEqual}). Only whether the
 * lengths differ can be learnt from the time it takes, and the length of a generated token is public.
 */
export function createTokenCompare(secret: string): (candidate: string) => boolean {
  return (candidate) => candidate.length === secret.length && sameLengthEqual(candidate, secret);
}

const BEARER_HEADER = /^\s*(\S+)\s+(\S+)\s*$/;
const BEARER_PREFIX = 'Bearer ';

/** Whether `code` may be whitespace to `\s` (a superset: a false positive only takes the slow path). */
function mayBeSpace(code: number): boolean {
  return code <= 0x20 || code === 0xa0 || code >= 0x1680;
}

/**
 * The credential of an `Authorization: Bearer <credential>` header (scheme case-insensitive, one
 * credential, surrounding whitespace allowed), or `undefined`. The header every client sends
 * (`Bearer ` then the token) is read with a scan and a slice; any other spelling goes through the
 * full pattern, so both give the same answer.
 */
export function bearerCredential(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  if (authorization.length > BEARER_PREFIX.length && authorization.startsWith(BEARER_PREFIX)) {
    let plain = true;
    for (let index = BEARER_PREFIX.length; index < authorization.length; index += 1) {
      if (mayBeSpace(authorization.charCodeAt(index))) {
        plain = false;
        break;
      }
    }
    if (plain) return authorization.slice(BEARER_PREFIX.length);
  }
  const match = BEARER_HEADER.exec(authorization);
  if (match === null || match[1]?.toLowerCase() !== 'bearer') return undefined;
  return match[2];
}

/** One accepted bearer token and the name calls made with it are attributed to. */
export interface NamedTokenEntry {
  readonly name: string;
  readonly token: string;
}

/**
 * Builds a bearer lookup over several named tokens: the name of the token the header carries, or
 * `undefined`. The candidate is compared in constant time ({@link sameLengthEqual}) against every
 * token of its length with no early exit, so the time taken says nothing about which token matched
 * (only whether the length is one in use, which is public: every generated token has 43 characters).
 */
export function createBearerTable(tokens: readonly NamedTokenEntry[]): (authorization: string | undefined) => string | undefined {
  const groups = new Map<number, Array<{ name: string; token: string }>>();
  for (const { name, token } of tokens) {
    if (token.length === 0) continue;
    let group = groups.get(token.length);
    if (group === undefined) {
      group = [];
      groups.set(token.length, group);
    }
    group.push({ name, token });
  }
  return (authorization) => {
    const candidate = bearerCredential(authorization);
    if (candidate === undefined) return undefined;
    const group = groups.get(candidate.length);
    if (group === undefined) return undefined;
    let found: string | undefined;
    for (const entry of group) {
      // Every entry is compared; the first match is kept without leaving the loop.
      if (sameLengthEqual(candidate, entry.token) && found === undefined) found = entry.name;
    }
    return found;
  };
}

/**
 * Builds a bearer check for `token`: the scheme is matched case-insensitively and the credential is
 * compared in constant time ({@link createTokenCompare}).
 */
export function createBearerCheck(token: string): (authorization: string | undefined) => boolean {
  const matches = createTokenCompare(token);
  return (authorization) => {
    const candidate = bearerCredential(authorization);
    return candidate !== undefined && matches(candidate);
  };
}

const SLASH = 0x2f;
const DOT = 0x2e;
const PERCENT = 0x25;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const QUESTION = 0x3f;

/**
 * The path of an HTTP request target when the target is already in canonical origin-form, else
 * `undefined` (answer 400). The server gates and routes on this one path, so no spelling can reach
 * a route that the gates judged as another.
 *
 * Canonical means: it starts with `/` (no absolute-form `http://host/…`, no asterisk-form `*`), and
 * no normalisation a URL parser or router applies could change its path — no `%` escape at all
 * (`%2e%2e`, `%2f`, `%5f…`), no backslash, no `#`, no empty segment (`//`), no segment that ends in
 * a dot (`.`, `..`, `status.`), only printable ASCII. The query (after `?`) is not examined.
 * One pass over the target's characters; no URL object.
 */
export function canonicalPath(target: string | undefined): string | undefined {
  if (target === undefined || target.charCodeAt(0) !== SLASH) return undefined;
  if (target.length === 1) return target;
  let end = target.length;
  let segmentStart = 1;
  for (let index = 1; index <= end; index += 1) {
    const code = index === end ? SLASH : target.charCodeAt(index);
    if (code === SLASH) {
      if (index === segmentStart) {
        // An empty segment: only the one after a trailing slash (`/a/`) is allowed.
        if (index !== end) return undefined;
      } else if (target.charCodeAt(index - 1) === DOT) {
        return undefined;
      }
      segmentStart = index + 1;
    } else if (code === QUESTION) {
      end = index;
      index -= 1;
    } else if (code === PERCENT || code === BACKSLASH || code === HASH || code <= 0x20 || code >= 0x7f) {
      return undefined;
    }
  }
  return end === target.length ? target : target.slice(0, end);
}
