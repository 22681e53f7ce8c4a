import { BlockList, isIP } from 'node:net';

/** Paths the OpenClaw gateway hosts for canvases (`/__openclaw__/canvas/…`, `/__openclaw__/a2ui/…`). */
export const HOSTED_PATH_PREFIX = '/__openclaw__/';

/** The path prefix of a capability-scoped gateway surface URL (`…/__openclaw__/cap/<token>`). */
const SCOPED_PREFIX = '/__openclaw__/cap/';

/** Who asks: a local MCP or CLI caller may open this machine's own pages; a remote one may not. */
export interface CanvasUrlContext {
  readonly remote: boolean;
  /** The connected gateway's `pluginSurfaceUrls.canvas`, when a gateway gave one. */
  readonly gatewayCanvasUrl?: string | undefined;
}

/** Why a canvas URL was refused; `failure` is the gateway-facing code in the error's `data.code`. */
export type CanvasUrlRefusal =
  | { readonly ok: false; readonly code: 'invalid_arguments'; readonly failure: 'CANVAS_URL_INVALID'; readonly reason: string }
  | { readonly ok: false; readonly code: 'denied'; readonly failure: 'CANVAS_URL_REFUSED'; readonly reason: string }
  | { readonly ok: false; readonly code: 'unavailable'; readonly failure: 'CANVAS_HOST_NOT_CONFIGURED'; readonly reason: string };

export type CanvasUrlDecision = { readonly ok: true; readonly url: string } | CanvasUrlRefusal;

/** IPv4 ranges that are not the public internet: this host, private networks, link-local, CGNAT, benchmark, multicast, reserved. */
const PRIVATE_V4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/** IPv6 ranges of the same kind: unspecified, loopback, unique-local, link-local, site-local, multicast. */
const PRIVATE_V6: readonly (readonly [string, number])[] = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

function v4Hex(address: string): [string, string] {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

function buildPrivateList(): BlockList {
  const list = new BlockList();
  for (const [address, prefix] of PRIVATE_V4) {
    list.addSubnet(address, prefix, 'ipv4');
    // The same hosts inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::).
    const [high, low] = v4Hex(address);
    list.addSubnet(`::ffff:${high}:${low}`, 96 + prefix, 'ipv6');
    list.addSubnet(`::${high}:${low}`, 96 + prefix, 'ipv6');
    list.addSubnet(`64:ff9b::${high}:${low}`, 96 + prefix, 'ipv6');
    list.addSubnet(`2002:${high}:${low}::`, 16 + prefix, 'ipv6');
  }
  for (const [address, prefix] of PRIVATE_V6) list.addSubnet(address, prefix, 'ipv6');
  return list;
}

const privateList = buildPrivateList();

/** Name suffixes that only ever mean this machine or its local network. */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.localdomain', '.internal', '.home.arpa', '.lan'];

/** True for an IP address (v4 or v6, no brackets) outside the public internet, whatever range it hides in. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return privateList.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * True for a host, as the URL parser leaves it (`127.0.0.1` for `2130706433`, `0x7f000001`, `127.1`
 * and `0177.0.0.1`; `[::ffff:7f00:1]` for `[::ffff:127.0.0.1]`), that names this machine or its local
 * network: a private, loopback or link-local address, `localhost` and its subdomains, local-only
 * suffixes (`.local`, `.internal`, …), and single-label names a resolver completes to intranet hosts.
 * Trailing dots (`localhost.`) are ignored.
 */
export function isPrivateHost(hostname: string): boolean {
  const bare = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');
  if (bare === '') return true;
  if (isIP(bare) !== 0) return isPrivateAddress(bare);
  if (bare === 'localhost' || LOCAL_SUFFIXES.some((suffix) => bare.endsWith(suffix))) return true;
  return !bare.includes('.');
}

/**
 * Resolves a gateway-hosted path (`/__openclaw__/canvas/…`) against the gateway's canvas surface URL:
 * under its capability-scoped prefix when it has one (`https://gw/__openclaw__/cap/<token>/__openclaw__/canvas/…`),
 * else at its origin.
 */
export function resolveHostedPath(path: string, surfaceUrl: string): string {
  const surface = new URL(surfaceUrl);
  const prefix = surface.pathname.replace(/\/+$/, '');
  const entry = new URL(path, surface.origin);
  const scoped = prefix.startsWith(SCOPED_PREFIX) ? prefix : '';
  return new URL(`${scoped}${entry.pathname}${entry.search}${entry.hash}`, surface.origin).href;
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  return new URL(url).origin;
}

const invalid = (reason: string): CanvasUrlRefusal => ({ ok: false, code: 'invalid_arguments', failure: 'CANVAS_URL_INVALID', reason });

/**
 * Decides whether a canvas may open `raw` for this caller, without touching the network: an absolute
 * http(s) URL without user info, or a gateway-hosted `/__openclaw__/…` path. A remote caller (gateway,
 * OpenAgent) is refused any host of this machine or its local network ({@link isPrivateHost}), except
 * the connected gateway's canvas origin; a local caller may open them.
 */
export function checkCanvasUrl(raw: string, context: CanvasUrlContext): CanvasUrlDecision {
  const trimmed = raw.trim();
  if (trimmed === '') return invalid('The url is empty.');
  let candidate = trimmed;
  if (trimmed.startsWith(HOSTED_PATH_PREFIX)) {
    if (context.gatewayCanvasUrl === undefined || !URL.canParse(context.gatewayCanvasUrl)) {
      return { ok: false, code: 'unavailable', failure: 'CANVAS_HOST_NOT_CONFIGURED', reason: `${trimmed} is a gateway-hosted path, but no connected gateway offers a canvas host.` };
    }
    candidate = resolveHostedPath(trimmed, context.gatewayCanvasUrl);
  }
  if (!URL.canParse(candidate)) return invalid('The url must be an absolute http:// or https:// URL (or a gateway-hosted /__openclaw__/ path).');
  const url = new URL(candidate);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid(`The url's scheme ${url.protocol} is not allowed; only http: and https: are.`);
  if (url.username !== '' || url.password !== '') return invalid('The url must not carry a user name or password.');
  if (context.remote && url.origin !== originOf(context.gatewayCanvasUrl) && isPrivateHost(url.hostname)) {
    return { ok: false, code: 'denied', failure: 'CANVAS_URL_REFUSED', reason: `A remote caller may not open ${url.hostname} in the canvas: it is this machine or its local network.` };
  }
  return { ok: true, url: url.href };
}

/** Resolves a host name to its addresses (`dns.lookup` with `all: true`). */
export type HostLookup = (hostname: string) => Promise<readonly string[]>;

/**
 * For a remote caller's request: whether `url`'s host name resolves only to public addresses, so a
 * public name pointing at this machine (`localtest.me`, DNS rebinding) is refused too. Literal
 * addresses and names {@link isPrivateHost} already judged are not looked up; a name that does not
 * resolve is let through (the browser cannot reach it either).
 */
export async function resolvesPublic(url: URL, lookup: HostLookup): Promise<boolean> {
  const bare = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) return !isPrivateAddress(bare);
  if (isPrivateHost(bare)) return false;
  let addresses: readonly string[];
  try {
    addresses = await lookup(bare);
  } catch {
    return true;
  }
  return addresses.every((address) => !isPrivateAddress(address));
}
