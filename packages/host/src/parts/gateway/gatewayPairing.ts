import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDeadline } from '@capnode/toolkit';
import type { GatewayNodeEntry, GatewayOperatorScope } from '@capnode/protocol/gateway';
import { HostError } from '../../errors.js';
import { GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE } from './gatewayMode.js';

/** Default of {@link ApproveGatewayPairingOptions.timeoutMs}: connecting as operator, approving and looking the gateway node up. */
const DEFAULT_PAIRING_TIMEOUT_MS = 30_000;
/** The operator handshake's own deadline (within the whole one), as `connectGatewayOperator` has by default. */
const CONNECT_TIMEOUT_MS = 15_000;
/** Approving needs `operator.pairing`; commands such as `system.run` also need `operator.admin`. */
const PAIRING_SCOPES: readonly GatewayOperatorScope[] = ['operator.read', 'operator.write', 'operator.pairing', 'operator.admin'];
/** Longest part of a gateway's or library's message put into ours (it may come from a remote peer). */
const MAX_CAUSE_CHARS = 300;

export interface ApproveGatewayPairingOptions {
  /** The host's config directory: the gateway node identity is read from it, the operator identity kept in it. */
  readonly home: string;
  /** The gateway, `ws://` or `wss://`. */
  readonly url: string;
  /** The gateway's shared token, if it has one. */
  readonly token?: string;
  /** capnode's version, reported by the operator connection. */
  readonly version: string;
  /** Aborting it ends the approval with `aborted`. */
  readonly signal?: AbortSignal;
  /** Deadline of the whole approval. Default 30 000 ms. */
  readonly timeoutMs?: number;
}

/** What {@link approveGatewayPairing} did. */
export interface GatewayPairingResult {
  /** This machine's gateway node id (the node identity's device id). */
  readonly nodeId: string;
  /** The pending requests it approved; empty when there was nothing to approve. */
  readonly approved: readonly { readonly requestId: string; readonly commands: readonly string[] }[];
  /** The gateway node as the gateway lists it afterwards, or `null` when the gateway does not know it. */
  readonly node: GatewayNodeEntry | null;
}

/**
 * This machine's gateway node id from the node identity file in `home`, or `undefined` before the
 * first connect (or when the file is unreadable). Never creates the file.
 */
export function readGatewayNodeId(home: string): string | undefined {
  try {
    const value = JSON.parse(readFileSync(join(home, GATEWAY_NODE_IDENTITY_FILE), 'utf8')) as { deviceId?: unknown };
    return typeof value.deviceId === 'string' ? value.deviceId : undefined;
  } catch {
    return undefined;
  }
}

function causeText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, MAX_CAUSE_CHARS);
}

/** What {@link rejectGatewayPairing} did. */
export interface GatewayPairingRejection {
  readonly nodeId: string;
  /** The pending requests it rejected; empty when there was nothing to reject. */
  readonly rejected: readonly { readonly requestId: string; readonly commands: readonly string[] }[];
}

type Operator = Awaited<ReturnType<typeof import('@capnode/gateway-bridge/node')['connectGatewayOperator']>>;
type Bridge = typeof import('@capnode/gateway-bridge/node');

/**
 * Connects to the gateway as an operator (identity `OPERATOR_IDENTITY_FILE` in `home`) for this
 * machine's gateway node, runs `work` under the whole deadline and closes the connection.
 */
async function withOperator<T>(options: ApproveGatewayPairingOptions, verb: 'approving' | 'rejecting', work: (bridge: Bridge, operator: Operator, nodeId: string, signal: AbortSignal) => Promise<T>): Promise<T> {
  const nodeId = readGatewayNodeId(options.home);
  if (!nodeId) throw new HostError('no_node_identity', `this machine has no node identity yet (${join(options.home, GATEWAY_NODE_IDENTITY_FILE)}) — connect it first: capnode serve --gateway ${options.url}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_PAIRING_TIMEOUT_MS;
  using deadline = createDeadline({ timeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
  const failed = (code: 'gateway_unreachable' | 'pairing_failed', message: string, why: string, error: unknown): HostError =>
    options.signal?.aborted
      ? new HostError('aborted', `${verb} the gateway pairing was aborted`, { cause: options.signal.reason })
      : new HostError(code, `${message}: ${why}`, { cause: error });
  const bridge = await import('@capnode/gateway-bridge/node');
  let operator;
  try {
    operator = await bridge.connectGatewayOperator({
      url: options.url,
      ...(options.token ? { token: options.token } : {}),
      identityPath: join(options.home, OPERATOR_IDENTITY_FILE),
      scopes: PAIRING_SCOPES,
      version: options.version,
      // The handshake's own timeout (not the deadline's abort) ends a wait for an unreachable gateway, so the error says why it failed.
      ...(options.signal ? { signal: options.signal } : {}),
      timeoutMs: Math.min(timeoutMs, CONNECT_TIMEOUT_MS),
    });
  } catch (error) {
    throw failed('gateway_unreachable', `cannot connect to ${options.url} as an operator`, causeText(error), error);
  }
  try {
    return await work(bridge, operator, nodeId, deadline.signal);
  } catch (error) {
    // The deadline aborts the request; "was aborted" would hide that the gateway did not answer in time.
    throw failed('pairing_failed', `${verb} the pairing failed`, deadline.timedOut ? `no answer from the gateway within ${timeoutMs} ms` : causeText(error), error);
  } finally {
    await operator.close();
  }
}

/**
 * Approves this machine's pending gateway node pairing: connects to the gateway as an operator
 * (identity `OPERATOR_IDENTITY_FILE` in `home`), approves every pending request of the gateway node
 * and looks the gateway node up. Works when the token makes the caller an operator of that gateway.
 * Shared by `capnode gateway pair`, the dashboard's `POST /api/gateway/pair` and `app.pairing.approve`.
 * @throws HostError `no_node_identity` (the gateway node never connected; the file is not created),
 * `gateway_unreachable` (the operator connection failed or timed out), `pairing_failed` (approving
 * or the look-up failed), `aborted` (`signal`); `cause` holds the underlying error.
 */
export function approveGatewayPairing(options: ApproveGatewayPairingOptions): Promise<GatewayPairingResult> {
  return withOperator(options, 'approving', async (bridge, operator, nodeId, signal) => {
    const approved = await bridge.approveGatewayNodePairing(operator, nodeId, { signal });
    const node = await bridge.findGatewayNode(operator, nodeId, { signal });
    return { nodeId, approved: approved.map((request) => ({ requestId: request.requestId, commands: request.commands ?? [] })), node: node ?? null };
  });
}

/**
 * Rejects this machine's pending gateway node pairing requests (`node.pair.reject`), as an operator
 * of the gateway like {@link approveGatewayPairing}; `app.pairing.reject`. Same errors.
 */
export function rejectGatewayPairing(options: ApproveGatewayPairingOptions): Promise<GatewayPairingRejection> {
  return withOperator(options, 'rejecting', async (bridge, operator, nodeId, signal) => {
    const pending = await bridge.listGatewayNodePairingRequests(operator, nodeId, { signal });
    for (const request of pending) await operator.request('node.pair.reject', { requestId: request.requestId }, { signal });
    return { nodeId, rejected: pending.map((request) => ({ requestId: request.requestId, commands: request.commands ?? [] })) };
  });
}
