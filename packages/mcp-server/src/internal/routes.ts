import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { jsonRpcErrorReply, noSessionReply, textReply, toResponse } from './responses.js';

export interface RouteOptions {
  /** Serves `/_capnode/*` (already authenticated with the admin token by the gates). */
  readonly admin: ((request: Request) => Promise<Response>) | undefined;
  readonly maxBodyBytes: number;
  readonly probeText: string;
  readonly onError: (error: unknown) => void;
}

/**
 * The HTTP surface beside the MCP POST hot path, routed by Hono through `@hono/node-server`: the GET
 * probe, the host's admin routes, DELETE, and 405 for every other verb. It runs after the gate chain,
 * which has already refused browsers, foreign Hosts and missing tokens.
 */
export function createRouteListener(options: RouteOptions): (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> {
  const app = new Hono();
  const tooLarge = () =>
    toResponse(jsonRpcErrorReply(413, -32000, `Payload Too Large: the body must not exceed ${options.maxBodyBytes} bytes`, undefined, null, { connection: 'close' }));
  const admin = options.admin;
  if (admin === undefined) app.all('/_capnode/*', () => toResponse(textReply(404, 'Not found.\n')));
  else app.all('/_capnode/*', bodyLimit({ maxSize: options.maxBodyBytes, onError: tooLarge }), (c) => admin(c.req.raw));
  const notAllowed = (method: string) =>
    toResponse(jsonRpcErrorReply(405, -32000, `Method not allowed: ${method}`, undefined, null, { allow: 'GET, POST, DELETE' }));
  // Hono serves HEAD with the GET handler; the spec allows only GET, POST and DELETE.
  app.get('*', (c) => {
    if (c.req.method !== 'GET') return notAllowed(c.req.method);
    return toResponse(c.req.header('accept')?.includes('text/event-stream') ? noSessionReply() : textReply(200, options.probeText));
  });
  app.delete('*', () => toResponse(noSessionReply()));
  app.all('*', (c) => notAllowed(c.req.method));
  app.onError((error) => {
    options.onError(error);
    return toResponse(jsonRpcErrorReply(500, -32603, 'Internal server error'));
  });
  return getRequestListener(app.fetch, { overrideGlobalObjects: false });
}
