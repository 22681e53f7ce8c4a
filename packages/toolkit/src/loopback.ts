const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The four octets of a dotted-quad IPv4 address (each 0–255, decimal), else `undefined`. */
function ipv4Octets(text: string): number[] | undefined {
  const match = IPV4.exec(text);
  if (match === null) return undefined;
  const octets = match.slice(1).map(Number);
  return octets.every((octet) => octet <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address (`::` compression and a dotted-quad tail allowed), else `undefined`. */
function ipv6Groups(text: string): number[] | undefined {
  if (!/^[0-9a-f:.]+$/.test(text) || text.split('::').length > 2) return undefined;
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && piece.includes('.')) {
        const octets = ipv4Octets(piece);
        if (octets === undefined) return undefined;
        groups.push(((octets[0] as number) << 8) | (octets[1] as number), ((octets[2] as number) << 8) | (octets[3] as number));
      } else if (/^[0-9a-f]{1,4}$/.test(piece)) groups.push(Number.parseInt(piece, 16));
      else return undefined;
    }
    return groups;
  };
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  if (left === undefined || right === undefined) return undefined;
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  return [...left, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...right];
}

/**
 * True for a loopback IP address, in any spelling a socket, a URL or a user gives it: IPv4
 * `127.0.0.0/8` (dotted quad, each part 0–255: `127.0.0.1`, `127.1.2.3`), IPv6 `::1` (also
 * `0:0:0:0:0:0:0:1`, leading zeros), and IPv4-mapped loopback (`::ffff:127.0.0.1`,
 * `::ffff:7f00:1`). Brackets are not part of an address (see {@link isLoopbackHost}); `localhost`
 * is a name, not an address; anything else — `0.0.0.0`, `::`, `127.0.0.1.nip.io` — is false.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  // What a loopback socket reports on every request, decided without parsing.
  if (address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1') return true;
  const lower = address.toLowerCase();
  const v4 = ipv4Octets(lower);
  if (v4 !== undefined) return v4[0] === 127;
  const v6 = ipv6Groups(lower);
  if (v6 === undefined || v6.slice(0, 5).some((group) => group !== 0)) return false;
  if (v6[5] === 0 && v6[6] === 0) return v6[7] === 1; // ::1
  return v6[5] === 0xffff && (v6[6] as number) >> 8 === 127; // ::ffff:127.x.y.z
}

/**
 * True for a host that names this machine's loopback: `localhost` (any case) or a loopback address
 * ({@link isLoopbackAddress}), bare or in URL brackets (`[::1]`). What a listener may bind, and a
 * plain `ws:`/`http:` URL may point at. A name that merely starts like one (`127.evil.com`,
 * `localhost.evil.com`) is false: names other than `localhost` are never trusted to resolve to
 * loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase() === 'localhost' || isLoopbackAddress(bare);
}

const LOOPBACK_HOST_HEADER = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/**
 * True when an HTTP `Host` header names a loopback listener the way clients spell it:
 * `127.0.0.1`, `localhost` (any case) or `[::1]`, with an optional port; a missing header is false.
 * The DNS-rebinding gate of every loopback listener: a page of another site that resolves its name
 * to 127.0.0.1 still sends its own name, so it is refused. Deliberately narrower than
 * {@link isLoopbackHost}: only the canonical spellings, no other `127.x` address, no unbracketed IPv6.
 */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  return host !== undefined && LOOPBACK_HOST_HEADER.test(host);
}
