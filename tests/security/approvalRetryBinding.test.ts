import { describe, expect, it } from 'vitest';
import { createApprovalBroker, createExecApprovalsCapability, createInvoker, createMemoryExecApprovalStore, createRegistry } from '@capnode/capabilities';

describe('retry mode: an approval answers the request the user saw, not a later one with the same arguments', () => {
  it('approving "mode ask → full" does not restore full over a deny set while the prompt was open (retry mode)', async () => {
    const store = createMemoryExecApprovalStore({ mode: 'ask' });
    await using broker = createApprovalBroker({ timeoutMs: 60_000, waitMode: 'return' });
    const invoker = createInvoker({ registry: createRegistry([createExecApprovalsCapability({ store, broker })]) });
    const call = () => invoker.invoke({ command: 'system.execApprovals.set', args: { mode: 'full' }, transport: 'mcp-http', caller: 'agent' });
    const first = await call();
    expect(first.result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
    const [pending] = broker.list();
    expect(pending!.summary).toContain('mode ask → full');
    // The user locks everything down, then answers the old prompt it still sees.
    await store.set({ mode: 'deny', allowlist: [] });
    expect(broker.answer(pending!.id, 'allow-once', { argsHash: pending!.argsHash! })).toBe('answered');
    const retry = await call();
    expect((await store.get()).mode).toBe('deny');
    expect(retry.result.ok).toBe(false);
  });
});
