import { readTokenFile } from '../../../config/paths.js';
import type { TokenView } from '../apiTypes.js';
import { apiError, json } from '../reply.js';
import type { Route, RouteContext } from '../types.js';

/** A secret as the dashboard shows it before Reveal: its last 4 characters only. */
export function maskSecret(value: string | undefined): string {
  if (!value) return '';
  return value.length <= 8 ? '••••••••' : `••••••••${value.slice(-4)}`;
}

function readToken({ host }: RouteContext): string | Response {
  try {
    const token = readTokenFile(host.paths.mcpToken);
    if (token === undefined) return apiError(404, 'not_found', `no MCP token yet at ${host.paths.mcpToken} (the host creates it when the MCP listener first starts)`);
    return token;
  } catch (error) {
    return apiError(409, 'conflict', (error as Error).message);
  }
}

/** `GET /api/token` (masked, path), `POST /api/token/reveal`, `POST /api/token/rotate` (the listener takes only the new one). */
export const tokenRoutes: readonly Route[] = [
  [
    'GET',
    '/api/token',
    (context) => {
      const token = readToken(context);
      if (token instanceof Response && token.status !== 404) return token;
      return json(200, { masked: typeof token === 'string' ? maskSecret(token) : '', path: context.host.paths.mcpToken, exists: typeof token === 'string' } satisfies TokenView);
    },
  ],
  [
    'POST',
    '/api/token/reveal',
    (context) => {
      const token = readToken(context);
      if (token instanceof Response) return token;
      context.host.log('info', 'dashboard: the MCP token was revealed');
      context.host.audit({ command: 'capnode.token.reveal' });
      return json(200, { token });
    },
  ],
  [
    'POST',
    '/api/token/rotate',
    async (context) => {
      await context.host.rotateToken();
      context.host.log('info', 'dashboard: the MCP token was rotated');
      const token = readToken(context);
      return token instanceof Response ? token : json(200, { masked: maskSecret(token) });
    },
  ],
];
