import type { HelloOk } from '@capnode/protocol/gateway';
import { waitFor } from '@capnode/toolkit';
import { z } from 'zod';
import type { GatewayClient, GatewayLogLevel } from '../connection/clientContract.js';

/**
 * How long the gateway's capability-scoped surface URLs live when it does not say (OpenClaw's
 * `DEFAULT_PLUGIN_NODE_CAPABILITY_TTL_MS`, 10 minutes). Each authorized use extends it on the
 * gateway's side; the node cannot see uses, so it counts from issue and refreshes early.
 */
export const PLUGIN_SURFACE_DEFAULT_TTL_MS = 600_000;

/** A surface URL this close to its (counted) expiry is refreshed before it is used. */
export const PLUGIN_SURFACE_REFRESH_MARGIN_MS = 60_000;

/** The gateway method that re-mints a surface's capability (`plugin.surface.refresh` is its alias). */
export const PLUGIN_SURFACE_REFRESH_METHOD = 'node.pluginSurface.refresh';

/**
 * Node caps the OpenClaw gateway hosts a surface for (its core canvas host, `/__openclaw__/canvas/…`
 * and `/__openclaw__/a2ui/…`). It issues a surface's URL in `hello-ok` only when the connect's
 * approved caps include it, so a node approved during this connection must reconnect to get it.
 */
export const HOSTED_SURFACE_CAPS: readonly string[] = ['canvas'];

/** Deadline of one refresh request (OpenClaw's own nodes wait 8 s). */
const REFRESH_TIMEOUT_MS = 8_000;
/** After a failed refresh, calls use the current URL this long before an unforced refresh is tried again. */
const REFRESH_RETRY_MS = 15_000;

/** `node.pluginSurface.refresh` answer: `{ surface, pluginSurfaceUrls: { [surface]: url }, expiresAtMs? }`. */
const refreshResultSchema = z.looseObject({
  surface: z.string().optional(),
  pluginSurfaceUrls: z.record(z.string(), z.string()),
  expiresAtMs: z.number().optional(),
});

interface SurfaceEntry {
  readonly url: string;
  /** Local clock; when the URL's capability may have lapsed. */
  readonly expiresAt: number;
  /** Local clock; after a failed refresh, no unforced one is tried before this. */
  readonly retryAt?: number;
}

export interface PluginSurfaceOptions {
  /** Refresh even when the current URL is not near its expiry (e.g. the gateway refused it). */
  readonly force?: boolean;
  readonly signal?: AbortSignal;
}

/** The gateway's hosted plugin surface URLs for the current connection, kept fresh. */
export interface PluginSurfaces {
  /** Takes the surfaces a new connection's `hello-ok` carries (and forgets the previous connection's). */
  connected(hello: HelloOk): void;
  /** The current URL of `surface` (`canvas` → `http://gw:18789/__openclaw__/cap/<token>`), or `undefined`. */
  url(surface: string): string | undefined;
  /**
   * The URL of `surface`, refreshed first through `node.pluginSurface.refresh` when it is near its
   * expiry or `force` is set; one request at a time per surface. A failed refresh is logged and
   * the current URL returned (`undefined` when the gateway gave none: it refreshes only what it issued).
   */
  fresh(surface: string, options?: PluginSurfaceOptions): Promise<string | undefined>;
  /** Which of `caps` name a surface the gateway hosts ({@link HOSTED_SURFACE_CAPS}) but issued no URL for on this connection. */
  missing(caps: readonly string[]): string[];
  /** The connection (`hello-ok` `server.connId`) the URLs belong to. */
  readonly connId: string | undefined;
}

/**
 * Tracks `pluginSurfaceUrls` from the gateway's `hello-ok` and refreshes them as OpenClaw's own nodes
 * do: `node.pluginSurface.refresh { surface, observedUrl }`, whose answer carries the new URL in
 * `pluginSurfaceUrls[surface]` (and `expiresAtMs`). When another caller refreshed already (the
 * observed URL is stale but the gateway's current one is valid) the gateway answers with that one.
 */
export function createPluginSurfaces(context: {
  readonly client: () => GatewayClient;
  readonly log: (level: GatewayLogLevel, message: string) => void;
  readonly now?: () => number;
}): PluginSurfaces {
  const now = context.now ?? Date.now;
  let connId: string | undefined;
  let entries = new Map<string, SurfaceEntry>();
  const inflight = new Map<string, Promise<string | undefined>>();

  /** Entries belong to one connection: a reconnect's hello replaces them. */
  const live = (): Map<string, SurfaceEntry> | undefined => {
    const hello = context.client().hello();
    return hello !== undefined && hello.server.connId === connId ? entries : undefined;
  };

  /** Keeps the current URL and holds unforced refreshes back for a while, so a failing gateway is not asked on every call. */
  const keepCurrent = (surface: string, owner: string | undefined): string | undefined => {
    const current = connId === owner ? live()?.get(surface) : undefined;
    if (current !== undefined) entries.set(surface, { ...current, retryAt: now() + REFRESH_RETRY_MS });
    return live()?.get(surface)?.url;
  };

  const refresh = async (surface: string): Promise<string | undefined> => {
    const owner = connId;
    const observed = live()?.get(surface);
    try {
      const payload = await context.client().request(PLUGIN_SURFACE_REFRESH_METHOD, { surface, ...(observed ? { observedUrl: observed.url } : {}) }, { waitForConnection: false, timeoutMs: REFRESH_TIMEOUT_MS });
      const parsed = refreshResultSchema.safeParse(payload);
      const url = parsed.success ? parsed.data.pluginSurfaceUrls[surface] : undefined;
      if (url === undefined || !URL.canParse(url)) {
        context.log('warning', `the gateway's ${PLUGIN_SURFACE_REFRESH_METHOD} answer for ${surface} carries no URL; keeping the current one`);
        return keepCurrent(surface, owner);
      }
      if (connId !== owner) return live()?.get(surface)?.url;
      const issued = now();
      const remaining = parsed.success && parsed.data.expiresAtMs !== undefined ? parsed.data.expiresAtMs - Date.now() : PLUGIN_SURFACE_DEFAULT_TTL_MS;
      // The gateway's clock may differ from this one: never count on more than the default lifetime.
      entries.set(surface, { url, expiresAt: issued + (remaining > 0 ? Math.min(remaining, PLUGIN_SURFACE_DEFAULT_TTL_MS) : PLUGIN_SURFACE_DEFAULT_TTL_MS) });
      context.log('debug', `refreshed the gateway's ${surface} surface URL`);
      return url;
    } catch (error) {
      context.log('warning', `could not refresh the gateway's ${surface} surface URL: ${(error as Error).message}`);
      return keepCurrent(surface, owner);
    }
  };

  return {
    get connId() {
      return connId;
    },
    missing(caps) {
      const current = live();
      return caps.filter((cap) => HOSTED_SURFACE_CAPS.includes(cap) && current?.get(cap) === undefined);
    },
    connected(hello) {
      connId = hello.server.connId;
      const issued = now();
      entries = new Map();
      for (const [surface, url] of Object.entries(hello.pluginSurfaceUrls ?? {})) {
        if (URL.canParse(url)) entries.set(surface, { url, expiresAt: issued + PLUGIN_SURFACE_DEFAULT_TTL_MS });
      }
      inflight.clear();
      if (entries.size > 0) context.log('debug', `the gateway hosts plugin surfaces for this node: ${[...entries.keys()].join(', ')}`);
    },
    url(surface) {
      return live()?.get(surface)?.url;
    },
    async fresh(surface, options = {}) {
      const current = live()?.get(surface);
      // The gateway refreshes only surfaces it issued to this connection.
      if (current === undefined) return undefined;
      if (!options.force && (current.expiresAt - now() > PLUGIN_SURFACE_REFRESH_MARGIN_MS || (current.retryAt ?? 0) > now())) return current.url;
      let pending = inflight.get(surface);
      if (pending === undefined) {
        const started: Promise<string | undefined> = refresh(surface).finally(() => {
          // A reconnect may have started another refresh under this key meanwhile: leave that one.
          if (inflight.get(surface) === started) inflight.delete(surface);
        });
        pending = started;
        inflight.set(surface, pending);
      }
      // Shared by every caller: one caller giving up stops waiting, not the request.
      return options.signal ? waitFor(pending, { signal: options.signal }) : pending;
    },
  };
}
