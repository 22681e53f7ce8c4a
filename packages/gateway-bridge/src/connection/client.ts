import { isLoopbackHost } from '@capnode/toolkit';
import { GatewayError } from '../errors.js';
import { ConnectionLoop } from '../internal/connectionLoop.js';
import type { GatewayClient, GatewayClientOptions } from './clientContract.js';

/** Validates the gateway URL: `ws:` or `wss:`, no credentials in it. */
function parseGatewayUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new GatewayError('connect_rejected', `Invalid gateway URL '${url}': expected ws://host:port or wss://host:port.`, { cause: error });
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new GatewayError('connect_rejected', `Invalid gateway URL '${url}': the scheme must be ws: or wss:.`);
  }
  if (parsed.username || parsed.password) {
    throw new GatewayError('connect_rejected', `Invalid gateway URL: put the token in the token option, not in the URL.`);
  }
  return parsed;
}

/**
 * Creates a gateway client and starts connecting: challenge → signed `connect` → `hello-ok`.
 *
 * It reconnects after any loss with backoff (1 s doubling to 30 s, with jitter; a retryable refusal's
 * `retryAfterMs` is honoured; after a `1012 service restart` close it retries every 500 ms for 30 s, so
 * it is back within about a second of a restarted gateway), considers the connection dead after 2 × `tickIntervalMs` without a
 * `tick`, presents the device token from `hello-ok` on later connects, keeps frames within 64 KiB
 * before the handshake and `policy.maxPayload` after it, and drops malformed frames without failing.
 * A refused token or protocol version stops it with an actionable {@link GatewayError}
 * (`status().state === 'failed'`).
 *
 * @example
 * await using client = createGatewayClient({
 *   url: 'ws://127.0.0.1:18789', token, role: 'operator', scopes: ['operator.read'],
 *   client: { id: 'cli', mode: 'cli', version: '0.1.0', platform: 'linux' },
 *   identity, createSocket: createWsSocketFactory(),
 * });
 * const nodes = await client.request('node.list', {});
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const parsedUrl = parseGatewayUrl(options.url);
  const loop = new ConnectionLoop(options);
  if (parsedUrl.protocol === 'ws:' && !isLoopbackHost(parsedUrl.hostname)) {
    loop.log('warning', `gateway ${options.url} is not on loopback and not wss://: the token and all traffic travel unencrypted; use wss:// (e.g. through a TLS proxy or tailscale serve).`);
  }
  loop.start();
  const close = () => loop.close();
  return {
    url: options.url,
    status: () => loop.status(),
    hello: () => loop.hello(),
    ready: (readyOptions) => loop.ready(readyOptions),
    request: (method, params, requestOptions) => loop.request(method, params, requestOptions),
    subscribe(listener) {
      loop.listeners.add(listener);
      return () => {
        loop.listeners.delete(listener);
      };
    },
    reconnect: (reason) => loop.reconnect(reason),
    close,
    [Symbol.asyncDispose]: close,
  };
}
