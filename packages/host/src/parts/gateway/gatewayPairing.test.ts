import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateDeviceIdentity } from '@capnode/gateway-bridge/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// Only for what the real gateway cannot be made to do (an endless error message, never answering); the real flow runs in tests/gateway/cli.interop.ts.
import { startFakeGateway } from '../../../../gateway-bridge/src/internal/fakeGateway.js';
import { isHostError, type HostError } from '../../errors.js';
import { GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE } from './gatewayMode.js';
import { approveGatewayPairing, readGatewayNodeId } from './gatewayPairing.js';
import { freePort } from '../../../../../tests/support/net.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-gateway-pairing-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** This machine's gateway node identity, as the gateway node writes it on its first connect. */
function createNodeIdentity(): string {
  return loadOrCreateDeviceIdentity(join(home, GATEWAY_NODE_IDENTITY_FILE)).identity.deviceId;
}

async function failure(promise: Promise<unknown>): Promise<HostError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isHostError(error)) throw new Error(`expected a HostError, got ${String(error)}`);
  return error;
}

describe('readGatewayNodeId', () => {
  it('reads the device id of the gateway node identity, undefined when missing or unusable, never creating the file', () => {
    expect(readGatewayNodeId(home)).toBeUndefined();
    expect(existsSync(join(home, GATEWAY_NODE_IDENTITY_FILE))).toBe(false);
    writeFileSync(join(home, GATEWAY_NODE_IDENTITY_FILE), '{not json');
    expect(readGatewayNodeId(home)).toBeUndefined();
    writeFileSync(join(home, GATEWAY_NODE_IDENTITY_FILE), JSON.stringify({ deviceId: 42 }));
    expect(readGatewayNodeId(home)).toBeUndefined();
    rmSync(join(home, GATEWAY_NODE_IDENTITY_FILE));
    const deviceId = createNodeIdentity();
    expect(readGatewayNodeId(home)).toBe(deviceId);
  });
});

describe('approveGatewayPairing', () => {
  it('without a gateway node identity fails with no_node_identity naming the file and the fix, and creates no identity', async () => {
    const url = `ws://127.0.0.1:${await freePort()}`;
    const error = await failure(approveGatewayPairing({ home, url, version: '0.0.0-test' }));
    expect(error.code).toBe('no_node_identity');
    expect(error.message).toBe(`this machine has no node identity yet (${join(home, GATEWAY_NODE_IDENTITY_FILE)}) — connect it first: capnode serve --gateway ${url}`);
    expect(existsSync(join(home, GATEWAY_NODE_IDENTITY_FILE))).toBe(false);
    expect(existsSync(join(home, OPERATOR_IDENTITY_FILE))).toBe(false);
  });

  it('an unreachable gateway fails with gateway_unreachable by the deadline, saying why, with the cause', async () => {
    createNodeIdentity();
    const url = `ws://127.0.0.1:${await freePort()}`;
    const error = await failure(approveGatewayPairing({ home, url, token: 'secret-token-never-shown', version: '0.0.0-test', timeoutMs: 300 }));
    expect(error.code).toBe('gateway_unreachable');
    const prefix = `cannot connect to ${url} as an operator: `;
    expect(error.message.startsWith(prefix)).toBe(true);
    expect(error.message.length).toBeLessThanOrEqual(prefix.length + 300);
    expect(error.message).toMatch(/within 300 ms: .*ECONNREFUSED/);
    expect(error.message).not.toContain('secret-token-never-shown');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('the caller signal ends it with aborted (already aborted, or while connecting), the reason as cause', async () => {
    createNodeIdentity();
    const url = `ws://127.0.0.1:${await freePort()}`;
    const reason = new Error('stop');
    const before = await failure(approveGatewayPairing({ home, url, version: '0.0.0-test', signal: AbortSignal.abort(reason) }));
    expect(before.code).toBe('aborted');
    expect(before.cause).toBe(reason);

    const controller = new AbortController();
    const pending = approveGatewayPairing({ home, url, version: '0.0.0-test', signal: controller.signal, timeoutMs: 60_000 });
    setTimeout(() => controller.abort(reason), 50);
    const during = await failure(pending);
    expect(during.code).toBe('aborted');
    expect(during.message).toBe('approving the gateway pairing was aborted');
    expect(during.cause).toBe(reason);
  });

  it('rejects a bad timeoutMs before connecting', async () => {
    createNodeIdentity();
    await expect(approveGatewayPairing({ home, url: `ws://127.0.0.1:${await freePort()}`, version: '0.0.0-test', timeoutMs: -1 })).rejects.toThrow(RangeError);
    expect(existsSync(join(home, OPERATOR_IDENTITY_FILE))).toBe(false);
  });

  it('returns what it approved and the gateway node, and closes the operator connection', async () => {
    const nodeId = createNodeIdentity();
    const seen: Record<string, unknown>[] = [];
    await using gateway = await startFakeGateway(async (connection) => {
      seen.push((await connection.handshake()).params);
      const list = await connection.next((frame) => frame.method === 'node.pair.list');
      connection.respond(list.id, { pending: [{ requestId: 'r-1', nodeId, commands: ['system.run'] }, { requestId: 'r-other', nodeId: 'another-node' }] });
      const approve = await connection.next((frame) => frame.method === 'node.pair.approve');
      seen.push(approve.params);
      connection.respond(approve.id, { ok: true });
      const nodes = await connection.next((frame) => frame.method === 'node.list');
      connection.respond(nodes.id, { nodes: [{ nodeId, approvalState: 'approved', connected: true }] });
    });
    const result = await approveGatewayPairing({ home, url: gateway.url, version: '0.0.0-test', timeoutMs: 10_000 });
    expect(result).toEqual({ nodeId, approved: [{ requestId: 'r-1', commands: ['system.run'] }], node: { nodeId, approvalState: 'approved', connected: true } });
    expect(seen[0]).toMatchObject({ role: 'operator', scopes: ['operator.read', 'operator.write', 'operator.pairing', 'operator.admin'] });
    expect(seen.slice(1)).toEqual([{ requestId: 'r-1' }]);
    expect(existsSync(join(home, OPERATOR_IDENTITY_FILE))).toBe(true);
    await (await gateway.connection(0)).closed;
  });

  it('a failed approval is pairing_failed with the gateway message cut at 300 characters; a silent gateway ends at the deadline', async () => {
    createNodeIdentity();
    await using failing = await startFakeGateway(async (connection) => {
      await connection.handshake();
      const list = await connection.next((frame) => frame.method === 'node.pair.list');
      connection.fail(list.id, { code: 'INVALID_REQUEST', message: `refused ${'x'.repeat(5_000)}` });
    });
    const failed = await failure(approveGatewayPairing({ home, url: failing.url, version: '0.0.0-test', timeoutMs: 10_000 }));
    expect(failed.code).toBe('pairing_failed');
    expect(failed.message.startsWith('approving the pairing failed: ')).toBe(true);
    expect(failed.message.length).toBeLessThanOrEqual('approving the pairing failed: '.length + 300);
    expect(failed.cause).toBeInstanceOf(Error);

    await using silent = await startFakeGateway((connection) => void connection.handshake());
    const late = await failure(approveGatewayPairing({ home, url: silent.url, version: '0.0.0-test', timeoutMs: 500 }));
    expect(late.code).toBe('pairing_failed');
    expect(late.message).toBe('approving the pairing failed: no answer from the gateway within 500 ms');
  });
});
