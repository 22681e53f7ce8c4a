import { isHostError } from '../../../errors.js';
import type { Settings } from '../../../config/settings.js';
import type { GatewayNodeModeStatus } from '../../../status/hostStatus.js';
import { resolveGatewayConfig } from '../../gateway/gatewayMode.js';
import { approveGatewayPairing } from '../../gateway/gatewayPairing.js';
import type { GatewayPairResult, GatewaySaveResult, GatewayView } from '../apiTypes.js';
import { apiError, json, readJsonBody } from '../reply.js';
import type { Route, RouteContext } from '../types.js';

/**
 * `POST /api/gateway/pair`: approves this machine's pending gateway node pairing on the gateway, as
 * `capnode gateway pair` does ({@link approveGatewayPairing}; works when the user is an operator of
 * that gateway).
 */
async function pair({ host, signal }: RouteContext): Promise<Response> {
  const settings = host.settings.reload();
  const config = settings.gateway.url === undefined ? undefined : resolveGatewayConfig({ ...settings, gateway: { ...settings.gateway, enabled: true } }, undefined, host.env);
  if (!config) return apiError(400, 'invalid', 'no gateway configured: set its URL first (PUT /api/gateway)', [{ path: 'url', message: 'required' }]);
  try {
    return json(200, (await approveGatewayPairing({ home: host.paths.home, ...config, version: host.version, signal })) satisfies GatewayPairResult);
  } catch (error) {
    if (!isHostError(error)) throw error;
    switch (error.code) {
      case 'no_node_identity':
        return apiError(409, 'conflict', 'this machine has no gateway node identity yet: connect it to the gateway first');
      case 'pairing_failed':
        return apiError(409, 'conflict', error.message);
      default:
        return apiError(409, 'unavailable', error.message);
    }
  }
}

/** The gateway node's state and what is configured for it, the token as presence only (`GET /api/gateway`, `app.connection.gateways`). */
export function gatewayView(settings: Settings, node: GatewayNodeModeStatus, restartNeeded: readonly string[]): GatewayView {
  const { gateway } = settings;
  return {
    node,
    configured: { enabled: gateway.enabled, ...(gateway.url ? { url: gateway.url } : {}), hasToken: gateway.token !== undefined },
    restartNeeded: restartNeeded.filter((path) => path.startsWith('gateway.')),
  };
}

/**
 * `GET /api/gateway` (the gateway node's state and pairing from the host status, whether a token is
 * stored) and `PUT /api/gateway` `{ url, token?, enabled? }` (written to `gateway.*`; takes effect at
 * the next start, said in `restartNeeded`), and `POST /api/gateway/pair`.
 */
export const gatewayRoutes: readonly Route[] = [
  [
    'GET',
    '/api/gateway',
    ({ host }) => json(200, gatewayView(host.settings.reload(), host.status().node, host.restartNeeded())),
  ],
  [
    'PUT',
    '/api/gateway',
    async ({ request, host }) => {
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      const { url, token, enabled } = body;
      if (typeof url !== 'string') return apiError(400, 'invalid', 'url is required (ws:// or wss://)', [{ path: 'url', message: 'required' }]);
      const result = await host.patchSettings({ gateway: { url, enabled: enabled === undefined ? true : enabled, ...(token === undefined ? {} : { token }) } });
      if (!result.ok) return apiError(400, 'invalid', result.message, result.fields.map((field) => ({ ...field, path: field.path.replace(/^gateway\./, '') })));
      return json(200, { ok: true, applied: result.applied, restartNeeded: result.restartNeeded } satisfies GatewaySaveResult);
    },
  ],
  ['POST', '/api/gateway/pair', pair],
];
