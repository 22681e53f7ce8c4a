import { apiError, json, readJsonBody } from '../reply.js';
import type { Route } from '../types.js';

/**
 * `GET /api/gateway` (the gateway node's state and pairing from the host status, whether a token is
 * stored) and `PUT /api/gateway` `{ url, token?, enabled? }` (written to `node.*`; takes effect at
 * the next start, said in `restartNeeded`).
 */
export const gatewayRoutes: readonly Route[] = [
  [
    'GET',
    '/api/gateway',
    ({ host }) => {
      const node = (host.status() as { node?: unknown }).node;
      const settings = host.settings.reload().node;
      return json(200, { node, configured: { enabled: settings.enabled, ...(settings.url ? { url: settings.url } : {}), hasToken: settings.token !== undefined }, restartNeeded: host.restartNeeded().filter((path) => path.startsWith('node.')) });
    },
  ],
  [
    'PUT',
    '/api/gateway',
    async ({ request, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      const { url, token, enabled } = body;
      if (typeof url !== 'string') return apiError(400, 'invalid', 'url is required (ws:// or wss://)', [{ path: 'url', message: 'required' }]);
      const result = await host.patchSettings({ node: { url, enabled: enabled === undefined ? true : enabled, ...(token === undefined ? {} : { token }) } });
      if (!result.ok) return apiError(400, 'invalid', result.message, result.fields.map((field) => ({ ...field, path: field.path.replace(/^node\./, '') })));
      return json(200, { ok: true, applied: result.applied, restartNeeded: result.restartNeeded });
    },
  ],
];
