import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { delay } from '@capnode/toolkit';
import {
  createApprovalBroker,
  createExecApprovalHook,
  createInvoker,
  createMemoryExecApprovalStore,
  createRegistry,
  defineCapability,
  defineCommand,
  json,
  type ApprovalBroker,
  type ExecApprovalStore,
  type Invocation,
  type InvocationOutcome,
  type InvocationRequest,
  type Invoker,
  type Registry,
} from '@capnode/capabilities';
import { createBuiltinCapabilities, createNodeExecResolvers } from '@capnode/capabilities/node';
import type { GatewayClient, GatewayNode } from '@capnode/gateway-bridge';
import { GATEWAY_NODE_IDENTITY_FILE, connectGatewayOperator, createGatewayNode, type GatewayNodeOptions } from '@capnode/gateway-bridge/node';
import { startGateway, type GatewayOptions, type RealGateway } from './harness.js';
import { z } from 'zod';

/** Commands the interop gateway must forward to a linux node beyond its platform defaults. */
/**
 * Commands the gateway may forward. The last three are never declared by the node (a localOnly command
 * and case variants of declared ones): allowing them gives the gateway every chance to forward them,
 * so the node's own refusal is exercised wherever the gateway does not refuse them itself.
 */
export const INTEROP_ALLOW = ['device.info', 'device.status', 'interop.echo', 'interop.slow', 'interop.added', 'interop.local', 'INTEROP.ECHO', 'System.Run'];

/** A gate the slow command waits on, so tests decide when invocations finish. */
export interface Gate {
  open(): void;
  readonly opened: Promise<void>;
}

export function createGate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** The machine side of the interop tests: registry, shared pipeline with exec approvals, counters. */
export interface NodeFixture {
  readonly home: string;
  readonly registry: Registry;
  readonly invoker: Invoker;
  readonly broker: ApprovalBroker;
  /** The exec approval policy behind system.run and system.execApprovals.* (mode `ask` at first). */
  readonly store: ExecApprovalStore;
  /** Every request the pipeline finished, with its outcome (the audit seam). */
  readonly audited: Array<{ request: InvocationRequest; outcome: InvocationOutcome }>;
  /** Executions of interop.slow per `tag` argument. */
  readonly executions: Map<string, number>;
  /** interop.slow calls whose signal was aborted, by tag. */
  readonly aborted: Set<string>;
  /** interop.slow calls currently running. */
  running(): number;
  /** Gate interop.slow calls with this `tag` wait on (created on first use). */
  gate(tag: string): Gate;
  [Symbol.dispose](): void;
}

export function createNodeFixture(): NodeFixture {
  const home = mkdtempSync(join(tmpdir(), 'capnode-gateway-'));
  const registry = createRegistry();
  const store = createMemoryExecApprovalStore({ mode: 'ask' });
  const broker = createApprovalBroker({ timeoutMs: 60_000 });
  const audited: NodeFixture['audited'] = [];
  const executions = new Map<string, number>();
  const aborted = new Set<string>();
  const gates = new Map<string, Gate>();
  let running = 0;
  const gate = (tag: string) => {
    let found = gates.get(tag);
    if (!found) {
      found = createGate();
      gates.set(tag, found);
    }
    return found;
  };
  for (const capability of createBuiltinCapabilities({ execApprovals: { store, broker } })) registry.register(capability);
  registry.register(
    defineCapability({
      category: 'interop',
      commands: [
        defineCommand({
          name: 'interop.echo',
          description: 'Echoes its arguments.',
          input: z.object({ value: z.string() }),
          execute: (args) => json({ echo: args.value }),
        }),
        defineCommand({
          name: 'interop.slow',
          description: 'Counts an execution, then waits for the test to open its gate (or for cancellation).',
          input: z.object({ tag: z.string() }),
          async execute(args, context) {
            executions.set(args.tag, (executions.get(args.tag) ?? 0) + 1);
            running += 1;
            try {
              await new Promise<void>((resolve, reject) => {
                const onAbort = () => {
                  aborted.add(args.tag);
                  reject(context.signal.reason);
                };
                if (context.signal.aborted) return onAbort();
                context.signal.addEventListener('abort', onAbort, { once: true });
                void gate(args.tag).opened.then(() => {
                  context.signal.removeEventListener('abort', onAbort);
                  resolve();
                });
              });
            } finally {
              running -= 1;
            }
            return json({ tag: args.tag, executions: executions.get(args.tag) ?? 0 });
          },
        }),
        defineCommand({
          name: 'interop.local',
          description: 'Local-only; never declared to a gateway.',
          localOnly: true,
          execute: () => 'local',
        }),
      ],
    }),
  );
  const invoker = createInvoker({
    registry,
    hooks: [
      createExecApprovalHook({ store, broker, ...createNodeExecResolvers() }),
      {
        afterInvoke(_invocation: Invocation | undefined, request: InvocationRequest, outcome: InvocationOutcome) {
          audited.push({ request, outcome });
        },
      },
    ],
  });
  return {
    home,
    registry,
    invoker,
    broker,
    store,
    audited,
    executions,
    aborted,
    running: () => running,
    gate,
    [Symbol.dispose]() {
      for (const entry of gates.values()) entry.open();
      void broker.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** An operator with every scope the tests need (its own identity; loopback pairs it silently). */
export function connectOperator(url: string, token: string, home: string): Promise<GatewayClient> {
  return connectGatewayOperator({
    url,
    token,
    identityPath: join(home, 'test-operator.json'),
    scopes: ['operator.read', 'operator.write', 'operator.pairing', 'operator.admin', 'operator.approvals'],
  });
}

/** What node-level suites start from: the real gateway, a node fixture, capnode connected as its node, an operator. */
export interface NodeSession extends AsyncDisposable {
  readonly gateway: RealGateway;
  readonly fixture: NodeFixture;
  readonly node: GatewayNode;
  readonly operator: GatewayClient;
}

/**
 * Starts a {@link NodeSession}; `nodeOptions` adds to the node's connection options, `gatewayConfig`
 * to the gateway's config (see {@link GatewayOptions.config}). Disposing closes all of it.
 */
export async function startNodeSession(nodeOptions: Partial<GatewayNodeOptions> = {}, gatewayConfig?: GatewayOptions['config']): Promise<NodeSession> {
  const gateway = await startGateway({ allowCommands: INTEROP_ALLOW, ...(gatewayConfig ? { config: gatewayConfig } : {}) });
  const fixture = createNodeFixture();
  const node = createGatewayNode({
    url: gateway.url,
    token: gateway.token,
    invoker: fixture.invoker,
    identityPath: join(fixture.home, GATEWAY_NODE_IDENTITY_FILE),
    ...nodeOptions,
  });
  let operator: GatewayClient | undefined;
  const dispose = async (): Promise<void> => {
    await operator?.close();
    await node.close();
    fixture[Symbol.dispose]();
    await gateway[Symbol.asyncDispose]();
  };
  try {
    await node.ready({ timeoutMs: 30_000 });
    operator = await connectOperator(gateway.url, gateway.token, fixture.home);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { gateway, fixture, node, operator, [Symbol.asyncDispose]: dispose };
}

/**
 * The gateway's answers while its pairing store has not yet published a pairing it just approved (its
 * worker publication lags the approval by a moment): "Device pairing authority requires a current worker
 * publication" and "node pairing state unavailable before dispatch". Usually the invoke has not reached
 * the gateway node; the first may also come after dispatch, so a resend reuses the idempotency key and the
 * gateway node's invoke ledger answers it with the first result instead of running the command again.
 */
const PAIRING_NOT_PUBLISHED = /requires a current worker publication|pairing state unavailable before dispatch/;
/** How long {@link invokeNode} resends an invoke the gateway refused with {@link PAIRING_NOT_PUBLISHED}. */
const PAIRING_PUBLISH_WAIT_MS = 15_000;

type InvokeOutcome = { ok: true; payload: any } | { ok: false; code: string | undefined; message: string; details: unknown };

/**
 * The operator side of `node.invoke`; resolves with the response frame fields instead of throwing.
 * Right after a pairing approval the gateway may refuse an invoke until its pairing store has caught
 * up ({@link PAIRING_NOT_PUBLISHED}); that refusal, and only it, is resent (same idempotency key) for a while.
 */
export async function invokeNode(
  operator: GatewayClient,
  nodeId: string,
  command: string,
  params: unknown,
  options: { readonly timeoutMs?: number; readonly idempotencyKey?: string } = {},
): Promise<InvokeOutcome> {
  const until = Date.now() + PAIRING_PUBLISH_WAIT_MS;
  const once = { ...options, idempotencyKey: options.idempotencyKey ?? randomUUID() };
  for (;;) {
    const outcome = await invokeNodeOnce(operator, nodeId, command, params, once);
    if (outcome.ok || outcome.code !== 'UNAVAILABLE' || !PAIRING_NOT_PUBLISHED.test(outcome.message) || Date.now() > until) return outcome;
    await delay(100);
  }
}

async function invokeNodeOnce(
  operator: GatewayClient,
  nodeId: string,
  command: string,
  params: unknown,
  options: { readonly timeoutMs?: number; readonly idempotencyKey?: string },
): Promise<InvokeOutcome> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  try {
    const payload = await operator.request(
      'node.invoke',
      { nodeId, command, params, timeoutMs, idempotencyKey: options.idempotencyKey ?? randomUUID() },
      { timeoutMs: timeoutMs + 15_000 },
    );
    return { ok: true, payload };
  } catch (error) {
    const e = error as { gatewayCode?: string; message: string; details?: unknown };
    return { ok: false, code: e.gatewayCode, message: e.message, details: e.details };
  }
}
