import { createInvoker, createRegistry, type InvocationHook } from '@capnode/capabilities';

/**
 * Whether the pipeline hands `InvokeOptions.elicit` to its invocations (the approvals work adds it to
 * `@capnode/capabilities`); end-to-end elicitation tests run once it does.
 */
export async function pipelineCarriesElicit(): Promise<boolean> {
  const registry = createRegistry();
  registry.register({ category: 'probe', commands: [{ name: 'probe.elicit', description: 'probe', execute: () => ({ ok: true, content: [] }) }] });
  let carried = false;
  const hook: InvocationHook = { beforeInvoke: (invocation) => void (carried = typeof (invocation as { elicit?: unknown }).elicit === 'function') };
  const probe = createInvoker({ registry, hooks: [hook] });
  await probe.invoke({ command: 'probe.elicit', args: {}, transport: 'internal' }, { elicit: async () => ({ action: 'cancel' }) } as Parameters<typeof probe.invoke>[1]);
  return carried;
}
