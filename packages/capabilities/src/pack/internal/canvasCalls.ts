import { lookup } from 'node:dns/promises';
import type { CommandContext, Transport } from '../../contract.js';
import { CapabilityError, isCapabilityError } from '../../errors.js';
import { CdpError } from './cdpPipe.js';
import { isPrivateHost, resolvesPublic, type HostLookup } from './canvasUrl.js';
import type { CanvasLoad, CanvasRequestGuard } from './canvasWindow.js';

/** Transports whose callers sit on this machine (and its user): they may open its own pages. */
const LOCAL_TRANSPORTS: ReadonlySet<Transport> = new Set<Transport>(['mcp-http', 'mcp-stdio', 'cli']);

/** A caller through the gateway, OpenAgent or anything not known to be local (fails closed). */
export function isRemoteCaller(ctx: CommandContext): boolean {
  return !LOCAL_TRANSPORTS.has(ctx.request.transport);
}

const systemLookup: HostLookup = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The request guard for a remote caller's content: http(s) to public hosts only (by name and by what
 * the name resolves to), plus the connected gateway's canvas origin. `undefined` for a local caller.
 */
export function remoteGuard(options: { readonly gatewayCanvasUrl?: (() => string | undefined) | undefined }, ctx: CommandContext, resolve: HostLookup = systemLookup): CanvasRequestGuard | undefined {
  if (!isRemoteCaller(ctx)) return undefined;
  const verdicts = new Map<string, Promise<boolean>>();
  return async (url) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return url.protocol === 'data:' || url.protocol === 'blob:';
    const surface = options.gatewayCanvasUrl?.();
    if (surface !== undefined && URL.canParse(surface) && new URL(surface).origin === url.origin) return true;
    if (isPrivateHost(url.hostname)) return false;
    let verdict = verdicts.get(url.hostname);
    if (verdict === undefined) {
      verdict = resolvesPublic(url, resolve);
      verdicts.set(url.hostname, verdict);
    }
    return verdict;
  };
}

function isLoad(value: unknown): value is CanvasLoad {
  return typeof value === 'object' && value !== null && typeof (value as CanvasLoad).url === 'string' && typeof (value as CanvasLoad).errorText === 'string';
}

/**
 * Turns a canvas failure into the caller's `CapabilityError` (its `data.code` is the gateway's code):
 * a page the guard blocked is `denied`, a page that did not load is `failed` with the browser's net
 * error, a window that is not open is `unavailable`. Internal details go to the log only.
 */
export function canvasFailure(error: unknown, ctx: CommandContext): never {
  if (isCapabilityError(error) || ctx.signal.aborted) throw error;
  if (isLoad(error)) {
    if (error.errorText === 'net::ERR_BLOCKED_BY_CLIENT') {
      throw new CapabilityError('denied', 'The canvas refused to load that page: it (or a redirect) leads to this machine or its local network.', { data: { code: 'CANVAS_URL_REFUSED' } });
    }
    throw new CapabilityError('failed', `The canvas could not load ${error.url}: ${error.errorText}`, { data: { code: 'CANVAS_LOAD_FAILED' } });
  }
  if (CdpError.is(error) && error.code === 'closed') {
    throw new CapabilityError('unavailable', 'The canvas is not shown; call canvas.present first.', { data: { code: 'CANVAS_NOT_OPEN' } });
  }
  ctx.log('warning', `canvas: the browser failed: ${(error as Error)?.message ?? String(error)}`);
  throw new CapabilityError('unavailable', 'The canvas browser could not start or stopped answering; see the capnode log.', { data: { code: 'CANVAS_UNAVAILABLE' } });
}
