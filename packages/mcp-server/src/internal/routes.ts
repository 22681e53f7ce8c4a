import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { internalError, methodNotAllowed, noSessionReply, payloadTooLarge, sessionIdRequired, textReply, toResponse } from './jsonRpcReplies.js';

export interface RouteOptions {
  /** Serves `/_capnode/*` (already authenticated with the admin token by the gates). */
  readonly admin: ((request: Request) => Promise<Response>) | undefined;
  readonly maxBodyBytes: number;
  readonly probeText: string;
  /** Whether sessions are served: then GET streams and DELETE need an `Mcp-Session-Id`. */
  readonly sessions: boolean;
  readonly onError: (error: unknown) => void;
}

/** The two Hono listeners; the gate chain picks one by the canonical path it gated on. */
export interface RouteListeners {
  /** `/_capnode` and everything under it: the host's admin handler, or 404 without one. */
  readonly admin: (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>;
  /** Every other path: the GET probe, DELETE, and 405 for every other verb. */
  readonly surface: (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>;
}

/**
 * The HTTP surface beside the MCP POST hot path, routed by Hono through `@hono/node-server`: the GET
 * probe, the host's admin routes, DELETE, and 405 for every other verb. It runs after the gate chain,
 * which has already refused non-canonical targets, browsers, foreign Hosts and missing tokens.
 *
 * Admin and surface are separate apps chosen by the gate chain, not by Hono's own path matching, so
 * which token a path needs and which handler serves it are decided once, on one path.
 */
export function createRouteListener(options: RouteOptions): RouteListeners {
  const listen = (app: Hono) => {
    app.onError((error) => {
      options.onError(error);
      return toResponse(internalError());
    });
    return getRequestListener(app.fetch, { overrideGlobalObjects: false });
  };
  const tooLarge = () => toResponse(payloadTooLarge(options.maxBodyBytes));
  const adminApp = new Hono();
  const admin = options.admin;
  if (admin === undefined) adminApp.all('*', () => toResponse(textReply(404, 'Not found.\n')));
  else adminApp.all('*', bodyLimit({ maxSize: options.maxBodyBytes, onError: tooLarge }), (c) => admin(c.req.raw));

  const noSession = options.sessions ? sessionIdRequired : noSessionReply;
  const surfaceApp = new Hono();
  const notAllowed = (method: string) => toResponse(methodNotAllowed(method));
  // Hono serves HEAD with the GET handler; the spec allows only GET, POST and DELETE.
  surfaceApp.get('*', (c) => {
    if (c.req.method !== 'GET') return notAllowed(c.req.method);
    return toResponse(c.req.header('accept')?.includes('text/event-stream') ? noSession() : textReply(200, options.probeText));
  });
  surfaceApp.delete('*', () => toResponse(noSession()));
  surfaceApp.all('*', (c) => notAllowed(c.req.method));
  return { admin: listen(adminApp), surface: listen(surfaceApp) };
}
