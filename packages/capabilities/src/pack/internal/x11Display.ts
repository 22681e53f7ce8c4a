/** Where an X display listens: a unix socket path, or a TCP host and port. */
export type X11Address = { readonly kind: 'unix'; readonly path: string; readonly display: number; readonly screen: number } | { readonly kind: 'tcp'; readonly host: string; readonly port: number; readonly display: number; readonly screen: number };

/**
 * Parses `$DISPLAY` (`:99`, `:99.0`, `unix:99`, `localhost:10.0`) into the socket to connect to:
 * `/tmp/.X11-unix/X<n>` for local displays, TCP port 6000+n for a host name.
 */
export function parseDisplay(display: string | undefined): X11Address | undefined {
  if (!display) return undefined;
  const match = /^([^:]*):(\d+)(?:\.(\d+))?$/.exec(display.trim());
  if (!match) return undefined;
  const host = match[1] ?? '';
  const number = Number(match[2]);
  const screen = match[3] === undefined ? 0 : Number(match[3]);
  if (host === '' || host === 'unix') return { kind: 'unix', path: `/tmp/.X11-unix/X${number}`, display: number, screen };
  return { kind: 'tcp', host, port: 6000 + number, display: number, screen };
}
