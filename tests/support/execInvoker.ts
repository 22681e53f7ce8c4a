import {
  createApprovalBroker,
  createExecApprovalHook,
  createInvoker,
  createMemoryExecApprovalStore,
  createRegistry,
  type ApprovalBroker,
  type ApprovalDecision,
  type ExecApprovalPolicy,
  type ExecApprovalStore,
  type Invoker,
  type PendingApproval,
} from '@capnode/capabilities';
import { createBuiltinCapabilities, createNodeExecResolvers } from '@capnode/capabilities/node';

/** The built-in capabilities behind the exec approval hook, in process. */
export interface ExecInvoker extends AsyncDisposable {
  readonly store: ExecApprovalStore;
  readonly broker: ApprovalBroker;
  /** Every approval request the broker received, in order. */
  readonly asked: PendingApproval[];
  readonly invoker: Invoker;
}

/**
 * A real invoker over the built-in capabilities (real processes, Node's executable resolvers), gated by
 * the exec approval hook with an in-memory `policy` and a broker that waits (`block`). Each request is
 * answered with `answer`, or left pending without one. Disposal closes the broker.
 */
export function createExecInvoker(policy: Partial<ExecApprovalPolicy>, answer?: ApprovalDecision): ExecInvoker {
  const store = createMemoryExecApprovalStore(policy);
  const broker = createApprovalBroker({ waitMode: 'block' });
  const asked: PendingApproval[] = [];
  broker.subscribe((event) => {
    if (event.type !== 'requested') return;
    asked.push(event.approval);
    if (answer) queueMicrotask(() => broker.resolve(event.approval.id, answer));
  });
  const registry = createRegistry(createBuiltinCapabilities({ execApprovals: { store, broker } }));
  const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, ...createNodeExecResolvers() })] });
  return { store, broker, asked, invoker, [Symbol.asyncDispose]: () => broker.close() };
}
