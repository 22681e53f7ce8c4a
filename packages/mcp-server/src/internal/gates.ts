import { timingSafeEqual } from 'node:crypto';
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
 * Builds a constant-time comparison against `secret`: the candidate's UTF-8 bytes are written into a
 * buffer of the secret's length made once, so no digest or allocation is made per call. Only whether
 * the lengths differ can be learnt from the time it takes, and the length of a generated token is public.
 */
export function createTokenCompare(secret: string): (candidate: string) => boolean {
  const expected = Buffer.from(secret, 'utf8');
  const scratch = Buffer.alloc(expected.length);
  return (candidate) => {
    if (Buffer.byteLength(candidate, 'utf8') !== expected.length) return false;
    scratch.write(candidate, 'utf8');
    return timingSafeEqual(scratch, expected);
  };
}

/** One accepted bearer token and the name calls made with it are attributed to. */
export interface NamedTokenEntry {
  readonly name: string;
  readonly token: string;
}

/**
 * Builds a bearer lookup over several named tokens: the name of the token the header carries, or
 * `undefined`. The candidate is written once per distinct token length into a buffer made here, then
 * compared in constant time against every token of that length with no early exit, so the time taken
 * says nothing about which token matched (only whether the length is one in use, which is public: every
 * generated token has 43 characters). No digest or allocation is made per call.
 */
export function createBearerTable(tokens: readonly NamedTokenEntry[]): (authorization: string | undefined) => string | undefined {
  const groups = new Map<number, { scratch: Buffer; entries: Array<{ name: string; expected: Buffer }> }>();
  for (const { name, token } of tokens) {
    const expected = Buffer.from(token, 'utf8');
    if (expected.length === 0) continue;
    let group = groups.get(expected.length);
    if (group === undefined) {
      group = { scratch: Buffer.alloc(expected.length), entries: [] };
      groups.set(expected.length, group);
    }
    group.entries.push({ name, expected });
  }
  return (authorization) => {
    if (authorization === undefined) return undefined;
    const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(authorization);
    if (match === null || match[1]?.toLowerCase() !== 'bearer') return undefined;
    const candidate = match[2] as string;
    const group = groups.get(Buffer.byteLength(candidate, 'utf8'));
    if (group === undefined) return undefined;
    group.scratch.write(candidate, 'utf8');
    let found: string | undefined;
    for (const entry of group.entries) {
      // Every entry is compared; the first match is kept without leaving the loop.
      if (timingSafeEqual(group.scratch, entry.expected) && found === undefined) found = entry.name;
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
    if (authorization === undefined) return false;
    const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(authorization);
    if (match === null || match[1]?.toLowerCase() !== 'bearer') return false;
    return matches(match[2] as string);
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
