import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isGatewayError, type GatewayClientStatus } from '@capnode/gateway-bridge';
import { GATEWAY_NODE_IDENTITY_FILE, createGatewayNode } from '@capnode/gateway-bridge/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeFixture, INTEROP_ALLOW, type NodeFixture } from './fixtures.js';
import { interopSkipReason, startGateway, type RealGateway } from './harness.js';

const skipReason = interopSkipReason();
if (skipReason) console.warn(`gateway interop skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('connect failures and device tokens against the real gateway', () => {
  let gateway: RealGateway;
  let fixture: NodeFixture;

  beforeAll(async () => {
    gateway = await startGateway({ allowCommands: INTEROP_ALLOW });
    fixture = createNodeFixture();
  });

  afterAll(async () => {
    fixture?.[Symbol.dispose]();
    await gateway?.[Symbol.asyncDispose]();
  });

  it('a wrong token stops the node with an actionable error instead of retrying', async () => {
    const statuses: GatewayClientStatus[] = [];
    await using node = createGatewayNode({
      url: gateway.url,
      token: 'not-the-gateway-token',
      invoker: fixture.invoker,
      identityPath: join(fixture.home, 'wrong-token', GATEWAY_NODE_IDENTITY_FILE),
      operatorIdentityPath: false,
      onStatus: (status) => statuses.push(status.connection),
    });
    const error = await node.ready({ timeoutMs: 30_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGatewayError(error) && error.code).toBe('auth_failed');
    expect(isGatewayError(error) && error.detailCode).toBe('AUTH_TOKEN_MISMATCH');
    expect((error as Error).message).toContain('--gateway-token');
    expect(node.status().connection).toMatchObject({ state: 'failed', lastError: { code: 'auth_failed', detailCode: 'AUTH_TOKEN_MISMATCH' } });
    await delay(2_500);
    // No reconnect attempts after a non-retryable refusal.
    expect(statuses.filter((status) => status.state === 'connecting')).toHaveLength(1);
    expect(node.status().connection.state).toBe('failed');
  });

  it('keeps the device token from hello-ok and presents it on later connects', async () => {
    const identityPath = join(fixture.home, 'device-token', GATEWAY_NODE_IDENTITY_FILE);
    {
      await using first = createGatewayNode({ url: gateway.url, token: gateway.token, invoker: fixture.invoker, identityPath, operatorIdentityPath: false });
      await first.ready({ timeoutMs: 30_000 });
    }
    const stored = JSON.parse(readFileSync(identityPath, 'utf8')) as { deviceTokens: Record<string, { token: string }> };
    expect(stored.deviceTokens[`node ${gateway.url}`]?.token).toBeTruthy();

    // A later run whose shared token is stale still gets in with the device token alone.
    await using second = createGatewayNode({ url: gateway.url, token: 'rotated-away', invoker: fixture.invoker, identityPath, operatorIdentityPath: false });
    const hello = await second.ready({ timeoutMs: 30_000 });
    expect(hello.auth).toMatchObject({ role: 'node', method: 'device-token' });
  });
});
