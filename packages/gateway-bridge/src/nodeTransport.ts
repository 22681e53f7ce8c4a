import type { InvocationOutcome, Invoker, Registry } from '@capnode/capabilities';
import { MAX_ARGUMENTS_DEPTH, argumentsHash, exceedsJsonDepth } from '@capnode/protocol';
import {
  nodeInvokeCancelSchema,
  nodeInvokeRequestSchema,
  nodePairResolvedSchema,
  type GatewayEventFrame,
  type HelloOk,
  type NodeInvokeRequest,
  type NodeInvokeResultParams,
} from '@capnode/protocol/gateway';
import type { BackoffOptions } from './backoff.js';
import { createGatewayClient } from './client.js';
import type { GatewayClient, GatewayClientStatus, GatewayDeclaration, GatewayLogLevel } from './clientContract.js';
import { isGatewayError } from './errors.js';
import type { DeviceIdentity, DeviceTokenStore } from './identity.js';
import { serveExecApprovalsRoute } from './internal/execApprovalsSnapshot.js';
import { gatewayCaps } from './internal/gatewayCaps.js';
import { gatewayErrorCode } from './internal/gatewayCodes.js';
import { fingerprintArgs } from './internal/invokeFingerprint.js';
import { createInvokeLedger, type InvokeLedgerStats } from './invokeLedger.js';
import type { GatewaySocketFactory } from './socket.js';

/** The error a node answers when `maxConcurrent` invokes already run (as OpenClaw's own nodes do). */
export const NODE_BUSY_MESSAGE = 'node busy, retry';

/**
 * What a node declares to the gateway: every registry command except `localOnly` ones, and as caps
 * the OpenClaw families of their categories (camera, computer, location, screen, browser, canvas,
 * talk — `tts`/`stt` count as talk), in registration order. Categories without a family (system,
 * device, clipboard, …) send no cap; a category whose commands were all withheld sends none.
 */
export function nodeDeclaration(registry: Registry): GatewayDeclaration {
  const commands = registry.commands({ excludeLocalOnly: true });
  return { caps: gatewayCaps(commands.map((command) => command.category)), commands: commands.map((command) => command.name) };
}

function sameDeclaration(a: GatewayDeclaration, b: GatewayDeclaration): boolean {
  return a.caps.length === b.caps.length && a.commands.length === b.commands.length && a.caps.every((cap, i) => cap === b.caps[i]) && a.commands.every((command, i) => command === b.commands[i]);
}

/** Where the gateway stands on this node: device pairing, then approval of its declared commands. */
export type NodePairingState =
  /** Connected; the gateway has not said whether the declared commands are approved. */
  | 'unknown'
  /** The gateway waits for its owner to approve this device (connect refused with PAIRING_REQUIRED). */
  | 'device-pending'
  /** The declared commands wait for approval (`node.pair.approve`). */
  | 'commands-pending'
  | 'approved'
  | 'rejected';

/** Tells the user the gateway owner must approve something, with the request id to approve. */
export interface NodePairingRequest {
  readonly kind: 'device' | 'commands';
  readonly requestId?: string;
  /** Commands waiting for approval (kind `commands`). */
  readonly commands?: readonly string[];
  /** One actionable line for the user. */
  readonly message: string;
}

/** What {@link NodeTransportOptions.inspectPairing} reports for this node. */
export interface NodePairingInspection {
  readonly state: 'pending' | 'approved' | 'unknown';
  readonly requestId?: string;
  readonly commands?: readonly string[];
}

export interface GatewayNodeStatus {
  readonly nodeId: string;
  readonly connection: GatewayClientStatus;
  /** What the current (or last) connect declared. */
  readonly declared: GatewayDeclaration;
  readonly pairing: { readonly state: NodePairingState; readonly requestId?: string; readonly commands?: readonly string[] };
  readonly invocations: InvokeLedgerStats;
}

export interface NodeTransportOptions {
  readonly url: string;
  /** The gateway's shared token. */
  readonly token?: string;
  readonly password?: string;
  /** The invocation pipeline every transport shares (approvals, policy, audit); its registry is declared. */
  readonly invoker: Invoker;
  readonly identity: DeviceIdentity;
  readonly deviceTokens?: DeviceTokenStore;
  readonly createSocket: GatewaySocketFactory;
  /** How the node describes itself; `platform` must be `linux`, `macos` or `windows` for the gateway's command policy. */
  readonly client: {
    readonly version: string;
    readonly platform: string;
    readonly deviceFamily?: string;
    readonly displayName?: string;
    readonly instanceId?: string;
  };
  /** Most invokes running at once; more get "node busy, retry". Default 8. */
  readonly maxConcurrent?: number;
  /** How long a finished invoke is replayed for a repeated idempotency key. Default 10 minutes. */
  readonly rememberMs?: number;
  /** Registry changes within this window are declared together. Default 200 ms. */
  readonly declarationDebounceMs?: number;
  /** How long a redeclaration waits for running invokes before it reconnects anyway. Default 30 s. */
  readonly redeclareDrainMs?: number;
  /**
   * Looks up this node's pending approval through an operator connection (node roles cannot), so the
   * request id can be surfaced; `@capnode/gateway-bridge/node` provides one.
   */
  readonly inspectPairing?: (nodeId: string, options: { readonly signal: AbortSignal }) => Promise<NodePairingInspection>;
  readonly onPairingRequired?: (request: NodePairingRequest) => void;
  readonly onStatus?: (status: GatewayNodeStatus) => void;
  readonly onLog?: (level: GatewayLogLevel, message: string) => void;
  readonly requestTimeoutMs?: number;
  readonly handshakeTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  readonly random?: () => number;
  /** Aborting closes the node. */
  readonly signal?: AbortSignal;
}

/** This machine as an OpenClaw node: serves gateway invokes through the shared invocation pipeline. */
export interface GatewayNode {
  /** The gateway's id for this node (the device id). */
  readonly nodeId: string;
  readonly client: GatewayClient;
  status(): GatewayNodeStatus;
  /** Resolves once connected (see `GatewayClient.ready`). */
  ready(options?: { readonly signal?: AbortSignal; readonly timeoutMs?: number }): Promise<HelloOk>;
  /** Aborts running invokes, closes the connection. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The `node.invoke.result` params for an outcome of the pipeline. Failure codes in the gateway's
 * spelling: a command's own `data.code` (e.g. `LOCATION_DISABLED`) passes through, `consent_required`
 * is `PERMISSION_REQUIRED`, `unavailable` `UNAVAILABLE`, `payload_too_large` `PAYLOAD_TOO_LARGE`,
 * any other code upper-cased.
 */
export function toInvokeResult(id: string, nodeId: string, outcome: InvocationOutcome): NodeInvokeResultParams {
  const { result } = outcome;
  if (!result.ok) return { id, nodeId, ok: false, error: { code: gatewayErrorCode(result.error), message: result.error.message } };
  return { id, nodeId, ok: true, payload: result.structured ?? { content: result.content } };
}

function execApprovalsRouteCommand(name: string | undefined): 'system.execApprovals.get' | 'system.execApprovals.set' | undefined {
  return name === 'system.execApprovals.get' || name === 'system.execApprovals.set' ? name : undefined;
}

/**
 * The error code a node answers for an invoke of a command it did not declare: the gateway's own
 * code for "node command not allowed", so callers see the same refusal whichever side made it.
 */
const NOT_DECLARED_CODE = 'INVALID_REQUEST';

function notDeclaredMessage(command: string): string {
  return `node command not allowed: ${JSON.stringify(command.slice(0, 200))} is not declared by this node`;
}

function errorResult(id: string, nodeId: string, code: string, message: string): NodeInvokeResultParams {
  return { id, nodeId, ok: false, error: { code, message } };
}

type ParsedArgs = { readonly ok: true; readonly args: unknown } | { readonly ok: false; readonly message: string };

function invokeArgs(request: NodeInvokeRequest): ParsedArgs {
  if (typeof request.paramsJSON === 'string') {
    try {
      return { ok: true, args: JSON.parse(request.paramsJSON) ?? {} };
    } catch {
      return { ok: false, message: 'paramsJSON is not valid JSON' };
    }
  }
  return { ok: true, args: request.params ?? {} };
}

/**
 * Connects this machine to an OpenClaw gateway as a node (runtime-neutral core; the Node entry's
 * `createGatewayNode` wires `ws`, the identity file and the pairing inspector).
 *
 * Declares the registry's commands (without `localOnly` ones) and redeclares by reconnecting when
 * the registry changes; answers `node.invoke.request` through `invoker` (same approvals, policy and
 * audit as MCP) with `node.invoke.result`; honours the request's `timeoutMs` and `node.invoke.cancel`;
 * runs at most `maxConcurrent` invokes (more get "node busy, retry"); runs a repeated
 * `idempotencyKey` once, answering every delivery with the same result.
 */
export function createNodeTransport(options: NodeTransportOptions): GatewayNode {
  const { invoker, identity } = options;
  const registry = invoker.registry;
  const nodeId = identity.deviceId;
  const log = (level: GatewayLogLevel, message: string) => {
    try {
      options.onLog?.(level, message);
    } catch {
      // The logger's problem.
    }
  };
  const ledger = createInvokeLedger<NodeInvokeResultParams>({
    ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
    ...(options.rememberMs !== undefined ? { rememberMs: options.rememberMs } : {}),
  });
  const lifetime = new AbortController();
  let declared = nodeDeclaration(registry);
  // Exactly the names this connection declared: an invoke of anything else (a localOnly command, one
  // registered after the declaration, a case variant such as `System.Run`) is refused before the pipeline.
  let declaredNames: ReadonlySet<string> = new Set(declared.commands);
  let pairing: GatewayNodeStatus['pairing'] = { state: 'unknown' };
  let pairingVersion = 0;
  let redeclareTimer: ReturnType<typeof setTimeout> | undefined;
  let redeclaring = false;
  let closed = false;
  // Assigned right below; the client reports status while it is being created.
  let client: GatewayClient | undefined;

  const status = (): GatewayNodeStatus => ({ nodeId, connection: client!.status(), declared, pairing, invocations: ledger.stats() });
  const emitStatus = () => {
    if (!client) return;
    try {
      options.onStatus?.(status());
    } catch {
      // The listener's problem.
    }
  };
  const announce = (request: NodePairingRequest) => {
    log('warning', request.message);
    try {
      options.onPairingRequired?.(request);
    } catch {
      // The listener's problem.
    }
  };

  const setPairing = (next: GatewayNodeStatus['pairing']) => {
    pairing = next;
    pairingVersion += 1;
  };

  const inspectPairing = async () => {
    if (!options.inspectPairing || closed) return;
    const startedAt = pairingVersion;
    try {
      const found = await options.inspectPairing(nodeId, { signal: lifetime.signal });
      // The gateway told the node something newer (node.pair.resolved, an invoke) while looking.
      if (closed || pairingVersion !== startedAt) return;
      if (found.state === 'pending') {
        setPairing({ state: 'commands-pending', ...(found.requestId ? { requestId: found.requestId } : {}), ...(found.commands ? { commands: found.commands } : {}) });
        emitStatus();
        announce({
          kind: 'commands',
          ...(found.requestId ? { requestId: found.requestId } : {}),
          ...(found.commands ? { commands: found.commands } : {}),
          message: `The gateway must approve this node's commands${found.commands ? ` (${found.commands.join(', ')})` : ''}${found.requestId ? `: request ${found.requestId} — run \`capnode gateway pair\` or \`openclaw nodes approve ${found.requestId}\`` : ''}.`,
        });
      } else if (found.state === 'approved' && pairing.state !== 'approved') {
        setPairing({ state: 'approved' });
        emitStatus();
      }
    } catch (error) {
      log('debug', `could not look up the node's pairing state: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const sendResult = async (params: NodeInvokeResultParams) => {
    try {
      await client!.request('node.invoke.result', params, { waitForConnection: false });
    } catch (error) {
      if (isGatewayError(error) && error.code === 'payload_too_large' && params.ok) {
        log('warning', `result of invoke ${params.id} is too large for the gateway: ${error.message}`);
        await sendResult(errorResult(params.id, params.nodeId, 'PAYLOAD_TOO_LARGE', `the result is larger than the gateway accepts (${error.message})`));
        return;
      }
      log('warning', `could not send the result of invoke ${params.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const onInvokeRequest = async (payload: unknown) => {
    const parsed = nodeInvokeRequestSchema.safeParse(payload);
    if (!parsed.success) {
      const raw = payload as { id?: unknown; nodeId?: unknown } | undefined;
      log('warning', 'dropped a malformed node.invoke.request');
      if (typeof raw?.id === 'string' && raw.id) await sendResult(errorResult(raw.id, nodeId, 'INVALID_REQUEST', 'malformed node.invoke.request'));
      return;
    }
    const request = parsed.data;
    if (request.nodeId !== nodeId) {
      log('warning', `dropped node.invoke.request ${request.id} addressed to node ${request.nodeId}`);
      return;
    }
    if (pairing.state !== 'approved') {
      // Only an approved node receives invokes.
      setPairing({ state: 'approved' });
      emitStatus();
    }
    // The name must have been declared, and still resolve to a command that may be declared: a
    // declared command replaced by a localOnly one before the redeclaration stays refused.
    if (!declaredNames.has(request.command) || registry.resolve(request.command)?.definition.localOnly === true) {
      log('warning', `refused node.invoke.request ${request.id}: command ${JSON.stringify(request.command.slice(0, 200))} was not declared to the gateway`);
      await sendResult(errorResult(request.id, nodeId, NOT_DECLARED_CODE, notDeclaredMessage(request.command)));
      return;
    }
    const args = invokeArgs(request);
    if (!args.ok) {
      await sendResult(errorResult(request.id, nodeId, 'INVALID_REQUEST', args.message));
      return;
    }
    if (exceedsJsonDepth(args.args, MAX_ARGUMENTS_DEPTH)) {
      await sendResult(errorResult(request.id, nodeId, 'INVALID_ARGUMENTS', `Invalid arguments for ${request.command}: they nest deeper than ${MAX_ARGUMENTS_DEPTH} levels.`));
      return;
    }
    let fingerprint: string;
    try {
      const name = registry.resolve(request.command)?.name ?? request.command;
      fingerprint = `${name.toLowerCase()}\n${await argumentsHash(fingerprintArgs(name, args.args))}`;
    } catch {
      await sendResult(errorResult(request.id, nodeId, 'INVALID_REQUEST', 'params cannot be read as JSON'));
      return;
    }
    const timeoutMs = typeof request.timeoutMs === 'number' && request.timeoutMs > 0 ? request.timeoutMs : undefined;
    const ticket = ledger.submit({
      invokeId: request.id,
      key: request.idempotencyKey ?? `invoke:${request.id}`,
      fingerprint,
      run: async (signal) => {
        const invoke = (command: string, commandArgs: unknown) =>
          invoker.invoke(
            {
              command,
              args: commandArgs,
              transport: 'gateway',
              requestId: request.id,
              caller: `gateway ${options.url}`,
              ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            },
            { signal: AbortSignal.any([signal, lifetime.signal]) },
          );
        // The gateway's exec approvals route expects the snapshot shape, not capnode's { mode, allowlist }.
        const route = execApprovalsRouteCommand(registry.resolve(request.command)?.name);
        const outcome = route ? await serveExecApprovalsRoute(route, args.args, invoke) : await invoke(request.command, args.args);
        return toInvokeResult(request.id, nodeId, outcome);
      },
    });
    emitStatus();
    switch (ticket.admission) {
      case 'busy':
        await sendResult(errorResult(request.id, nodeId, 'UNAVAILABLE', NODE_BUSY_MESSAGE));
        return;
      case 'conflict':
        await sendResult(errorResult(request.id, nodeId, 'INVALID_REQUEST', 'idempotencyKey was already used for a different command or arguments'));
        return;
      default: {
        if (ticket.admission !== 'started') log('info', `invoke ${request.id} repeats idempotency key ${request.idempotencyKey}; ${ticket.admission === 'joined' ? 'joining the running call' : 'replaying its result'}`);
        let result: NodeInvokeResultParams;
        try {
          result = await ticket.result;
        } catch {
          result = errorResult(request.id, nodeId, 'INTERNAL', `${request.command} failed with an internal error`);
        }
        emitStatus();
        if (closed) return;
        await sendResult({ ...result, id: request.id });
      }
    }
  };

  const onEvent = (event: GatewayEventFrame) => {
    switch (event.event) {
      case 'node.invoke.request':
        void onInvokeRequest(event.payload);
        return;
      case 'node.invoke.cancel': {
        const parsed = nodeInvokeCancelSchema.safeParse(event.payload);
        if (parsed.success && ledger.cancel(parsed.data.invokeId)) log('info', `invoke ${parsed.data.invokeId} cancelled by the gateway`);
        return;
      }
      case 'node.pair.resolved': {
        const parsed = nodePairResolvedSchema.safeParse(event.payload);
        if (!parsed.success || parsed.data.nodeId !== nodeId) return;
        setPairing(parsed.data.decision === 'approved' ? { state: 'approved' } : { state: 'rejected', requestId: parsed.data.requestId });
        log(parsed.data.decision === 'approved' ? 'info' : 'warning', `the gateway ${parsed.data.decision} this node's commands (request ${parsed.data.requestId})`);
        emitStatus();
        return;
      }
      default:
        return;
    }
  };

  const redeclare = async () => {
    redeclareTimer = undefined;
    if (closed || redeclaring) return;
    const next = nodeDeclaration(registry);
    if (sameDeclaration(next, declared)) return;
    redeclaring = true;
    try {
      if (ledger.stats().running > 0) {
        log('info', 'the capability set changed; redeclaring to the gateway once running invokes finish');
        await ledger.idle(options.redeclareDrainMs ?? 30_000);
      }
      if (closed) return;
      const added = next.commands.filter((command) => !declared.commands.includes(command));
      log('info', `the capability set changed; reconnecting to declare ${next.commands.length} commands${added.length ? ` (new: ${added.join(', ')}; the gateway must approve them)` : ''}`);
      setPairing({ state: 'unknown' });
      client!.reconnect('declaration changed');
    } finally {
      redeclaring = false;
    }
  };

  const unsubscribeRegistry = registry.subscribe(() => {
    if (closed) return;
    if (redeclareTimer) clearTimeout(redeclareTimer);
    redeclareTimer = setTimeout(() => void redeclare(), options.declarationDebounceMs ?? 200);
    (redeclareTimer as { unref?: () => void }).unref?.();
  });

  let lastConnectionPairingId: string | undefined;
  client = createGatewayClient({
    url: options.url,
    ...(options.token ? { token: options.token } : {}),
    ...(options.password ? { password: options.password } : {}),
    role: 'node',
    scopes: [],
    client: {
      id: 'node-host',
      mode: 'node',
      version: options.client.version,
      platform: options.client.platform,
      ...(options.client.deviceFamily ? { deviceFamily: options.client.deviceFamily } : {}),
      ...(options.client.displayName ? { displayName: options.client.displayName } : {}),
      ...(options.client.instanceId ? { instanceId: options.client.instanceId } : {}),
    },
    declaration: () => {
      declared = nodeDeclaration(registry);
      declaredNames = new Set(declared.commands);
      return declared;
    },
    identity,
    ...(options.deviceTokens ? { deviceTokens: options.deviceTokens } : {}),
    createSocket: options.createSocket,
    userAgent: `capnode-node/${options.client.version}`,
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.random ? { random: options.random } : {}),
    onEvent,
    onLog: options.onLog ?? (() => {}),
    onStatus: (connection) => {
      if (connection.pairingRequestId && connection.pairingRequestId !== lastConnectionPairingId) {
        lastConnectionPairingId = connection.pairingRequestId;
        setPairing({ state: 'device-pending', requestId: connection.pairingRequestId });
        announce({ kind: 'device', requestId: connection.pairingRequestId, message: connection.lastError?.message ?? `The gateway must approve this device (request ${connection.pairingRequestId}).` });
      }
      emitStatus();
    },
    onConnected: () => {
      lastConnectionPairingId = undefined;
      if (pairing.state === 'device-pending') setPairing({ state: 'unknown' });
      void inspectPairing();
    },
  });

  const gateway = client;
  // The client's first status ('connecting') came while it was being created.
  emitStatus();
  const close = async () => {
    if (closed) return gateway.close();
    closed = true;
    lifetime.abort(new Error('the gateway node is closing'));
    unsubscribeRegistry();
    if (redeclareTimer) clearTimeout(redeclareTimer);
    ledger.close();
    await gateway.close();
  };

  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener('abort', () => void close(), { once: true });

  return {
    nodeId,
    client: gateway,
    status,
    ready: (readyOptions) => gateway.ready(readyOptions),
    close,
    [Symbol.asyncDispose]: close,
  };
}
