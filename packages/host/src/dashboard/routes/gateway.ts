import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE, resolveGatewayConfig } from '../../gatewayMode.js';
import type { GatewayPairResult, GatewaySaveResult, GatewayView } from '../apiTypes.js';
import { apiError, json, readJsonBody } from '../reply.js';
import type { Route, RouteContext } from '../types.js';

/** How long approving a pairing may take (connect as operator, approve, look the node up). */
const PAIR_TIMEOUT_MS = 30_000;

function storedDeviceId(path: string): string | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as { deviceId?: unknown };
    return typeof value.deviceId === 'string' ? value.deviceId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `POST /api/gateway/pair`: approves this machine's pending node pairing on the gateway, as
 * `capnode gateway pair` does (connects as an operator with the configured token; works when the
 * user is an operator of that gateway).
 */
async function pair({ host, signal }: RouteContext): Promise<Response> {
  const settings = host.settings.reload();
  const config = settings.node.url === undefined ? undefined : resolveGatewayConfig({ ...settings, node: { ...settings.node, enabled: true } }, undefined, host.env);
  if (!config) return apiError(400, 'invalid', 'no gateway configured: set its URL first (PUT /api/gateway)', [{ path: 'url', message: 'required' }]);
  const nodeId = storedDeviceId(join(host.paths.home, NODE_IDENTITY_FILE));
  if (!nodeId) return apiError(409, 'conflict', 'this machine has no gateway node identity yet: connect it to the gateway first');
  const bridge = await import('@capnode/gateway-bridge/node');
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(PAIR_TIMEOUT_MS)]);
  let operator;
  try {
    operator = await bridge.connectGatewayOperator({
      url: config.url,
      ...(config.token ? { token: config.token } : {}),
      identityPath: join(host.paths.home, OPERATOR_IDENTITY_FILE),
      scopes: ['operator.read', 'operator.write', 'operator.pairing', 'operator.admin'],
      version: host.version,
      signal: deadline,
    });
  } catch (error) {
    return apiError(409, 'unavailable', `cannot connect to ${config.url} as an operator: ${(error as Error).message.slice(0, 300)}`);
  }
  try {
    const approved = await bridge.approveNodePairing(operator, nodeId, { signal: deadline });
    const node = await bridge.findGatewayNode(operator, nodeId, { signal: deadline });
    return json(200, { nodeId, approved: approved.map((request) => ({ requestId: request.requestId, commands: request.commands ?? [] })), node: node ?? null } satisfies GatewayPairResult);
  } catch (error) {
    return apiError(409, 'conflict', `approving the pairing failed: ${(error as Error).message.slice(0, 300)}`);
  } finally {
    await operator.close();
  }
}

/**
 * `GET /api/gateway` (the gateway node's state and pairing from the host status, whether a token is
 * stored) and `PUT /api/gateway` `{ url, token?, enabled? }` (written to `node.*`; takes effect at
 * the next start, said in `restartNeeded`), and `POST /api/gateway/pair`.
 */
export const gatewayRoutes: readonly Route[] = [
  [
    'GET',
    '/api/gateway',
    ({ host }) => {
      const settings = host.settings.reload().node;
      const view: GatewayView = {
        node: host.status().node,
        configured: { enabled: settings.enabled, ...(settings.url ? { url: settings.url } : {}), hasToken: settings.token !== undefined },
        restartNeeded: host.restartNeeded().filter((path) => path.startsWith('node.')),
      };
      return json(200, view);
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
      return json(200, { ok: true, applied: result.applied, restartNeeded: result.restartNeeded } satisfies GatewaySaveResult);
    },
  ],
  ['POST', '/api/gateway/pair', pair],
];
