import { nodePairResolvedSchema } from '@capnode/protocol/gateway';
import type { GatewayClientStatus, GatewayLogLevel } from '../connection/clientContract.js';
import type { GatewayNodeStatus, GatewayNodePairingInspection, GatewayNodePairingRequest } from '../gatewayNode/gatewayNodeContract.js';

type Pairing = GatewayNodeStatus['pairing'];

export interface PairingTrackerOptions {
  readonly nodeId: string;
  readonly inspect?: ((nodeId: string, options: { readonly signal: AbortSignal }) => Promise<GatewayNodePairingInspection>) | undefined;
  readonly onPairingRequired?: ((request: GatewayNodePairingRequest) => void) | undefined;
  readonly signal: AbortSignal;
  readonly log: (level: GatewayLogLevel, message: string) => void;
  readonly changed: () => void;
}

/**
 * Where the gateway stands on this node (device pairing, then approval of its declared commands),
 * from what the gateway tells the node (connect refusals, `node.pair.resolved`, invokes) and what an
 * operator look-up finds; tells the user what to approve.
 */
export interface PairingTracker {
  readonly current: Pairing;
  /** The declaration changed: the gateway has to decide again. */
  reset(): void;
  /** An invoke arrived: only an approved node receives them. */
  invoked(): void;
  /** A `node.pair.resolved` event; true when it approved this node's commands. */
  resolved(payload: unknown): boolean;
  /** A status of the connection (a device pairing request id shows there). */
  connectionStatus(status: GatewayClientStatus): void;
  /** A handshake succeeded: look up whether the commands wait for approval. */
  connected(): void;
}

export function createPairingTracker(options: PairingTrackerOptions): PairingTracker {
  const { nodeId, log } = options;
  let pairing: Pairing = { state: 'unknown' };
  let version = 0;
  let lastDeviceRequestId: string | undefined;
  const set = (next: Pairing) => {
    pairing = next;
    version += 1;
  };
  const announce = (request: GatewayNodePairingRequest) => {
    log('warning', request.message);
    try {
      options.onPairingRequired?.(request);
    } catch {
      // The listener's problem.
    }
  };
  const inspect = async () => {
    if (!options.inspect || options.signal.aborted) return;
    const startedAt = version;
    try {
      const found = await options.inspect(nodeId, { signal: options.signal });
      // The gateway told the node something newer (node.pair.resolved, an invoke) while looking.
      if (options.signal.aborted || version !== startedAt) return;
      if (found.state === 'pending') {
        set({ state: 'commands-pending', ...(found.requestId ? { requestId: found.requestId } : {}), ...(found.commands ? { commands: found.commands } : {}) });
        options.changed();
        announce({
          kind: 'commands',
          ...(found.requestId ? { requestId: found.requestId } : {}),
          ...(found.commands ? { commands: found.commands } : {}),
          message: `The gateway must approve this node's commands${found.commands ? ` (${found.commands.join(', ')})` : ''}${found.requestId ? `: request ${found.requestId} — run \`capnode gateway pair\` or \`openclaw nodes approve ${found.requestId}\`` : ''}.`,
        });
      } else if (found.state === 'approved' && pairing.state !== 'approved') {
        set({ state: 'approved' });
        options.changed();
      }
    } catch (error) {
      log('debug', `could not look up the node's pairing state: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return {
    get current() {
      return pairing;
    },
    reset: () => set({ state: 'unknown' }),
    invoked() {
      if (pairing.state === 'approved') return;
      set({ state: 'approved' });
      options.changed();
    },
    resolved(payload) {
      const parsed = nodePairResolvedSchema.safeParse(payload);
      if (!parsed.success || parsed.data.nodeId !== nodeId) return false;
      const approved = parsed.data.decision === 'approved';
      set(approved ? { state: 'approved' } : { state: 'rejected', requestId: parsed.data.requestId });
      log(approved ? 'info' : 'warning', `the gateway ${parsed.data.decision} this node's commands (request ${parsed.data.requestId})`);
      options.changed();
      return approved;
    },
    connectionStatus(status) {
      if (!status.pairingRequestId || status.pairingRequestId === lastDeviceRequestId) return;
      lastDeviceRequestId = status.pairingRequestId;
      set({ state: 'device-pending', requestId: status.pairingRequestId });
      announce({ kind: 'device', requestId: status.pairingRequestId, message: status.lastError?.message ?? `The gateway must approve this device (request ${status.pairingRequestId}).` });
    },
    connected() {
      lastDeviceRequestId = undefined;
      if (pairing.state === 'device-pending') set({ state: 'unknown' });
      void inspect();
    },
  };
}
