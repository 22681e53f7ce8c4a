// Answering approvals as an attacker would: a wrong hash, another caller's request, racing retries,
// and the per-caller share (keyed on a self-reported name: see the residual-risk test at the end).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApprovalBroker, createExecApprovalHook, createInvoker, createMemoryExecApprovalStore, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';

function setup(timeoutMs = 60_000) {
  const ran: unknown[] = [];
  const broker = createApprovalBroker({ timeoutMs, waitMode: 'return', maxPending: 8, maxPendingPerCaller: 2 });
  const store = createMemoryExecApprovalStore({ mode: 'ask' });
  const registry = createRegistry([
    defineCapability({ category: 'test', commands: [defineCommand({ name: 'system.run', description: '', input: z.object({ command: z.array(z.string()) }), execute: (args) => (ran.push(args), 'ran') })] }),
  ]);
  const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, resolveExecutable: (p) => `/usr/bin/${p}`, platform: 'linux' })] });
  const call = (command: string[], caller = 'agent') => invoker.invoke({ command: 'system.run', args: { command }, transport: 'mcp-http', caller });
  return { ran, broker, store, invoker, call, [Symbol.asyncDispose]: () => broker.close() };
}

describe('answering approvals', () => {
  it('a wrong hash answers nothing; the right one answers only that request', async () => {
    await using t = setup();
    await t.call(['git', 'push']);
    await t.call(['rm', '-rf', 'x']);
    const [push, rm] = t.broker.list();
    expect(t.broker.answer(push!.id, 'allow-once', { argsHash: rm!.argsHash! })).toBe('hash_mismatch');
    expect(t.broker.answer(push!.id, 'allow-once', { argsHash: 'sha256:' })).toBe('hash_mismatch');
    expect(t.broker.answer('zzzzzzzzzz', 'allow-once')).toBe('unknown');
    expect(t.broker.list()).toHaveLength(2);
    expect(t.broker.answer(push!.id, 'allow-once', { argsHash: push!.argsHash! })).toBe('answered');
    // Retrying the *other* command does not pick up the push approval.
    expect((await t.call(['rm', '-rf', 'x'])).result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
    expect(t.ran).toEqual([]);
    expect((await t.call(['git', 'push'])).result.ok).toBe(true);
    expect(t.ran).toEqual([{ command: ['git', 'push'] }]);
  });

  it('different arguments never claim an approval; two racing identical retries run exactly once', async () => {
    await using t = setup();
    await t.call(['git', 'push']);
    const [push] = t.broker.list();
    t.broker.answer(push!.id, 'allow-once', { argsHash: push!.argsHash! });
    expect((await t.call(['git', 'push', '--force'])).result.ok).toBe(false);
    const [a, b] = await Promise.all([t.call(['git', 'push']), t.call(['git', 'push'])]);
    expect([a.result.ok, b.result.ok].filter(Boolean)).toHaveLength(1);
    expect(t.ran).toHaveLength(1);
    // A third retry opens a new request instead of running again.
    expect((await t.call(['git', 'push'])).result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
    expect(t.ran).toHaveLength(1);
  });

  it('another caller (different self-reported name) does not claim the answer', async () => {
    await using t = setup();
    await t.call(['git', 'push'], 'alice');
    const [push] = t.broker.list();
    t.broker.answer(push!.id, 'allow-once', { argsHash: push!.argsHash! });
    expect((await t.call(['git', 'push'], 'mallory')).result.ok).toBe(false);
    expect(t.ran).toEqual([]);
    expect((await t.call(['git', 'push'], 'alice')).result.ok).toBe(true);
  });

  it('allow-always for a shell line records nothing', async () => {
    const broker = createApprovalBroker({ timeoutMs: 60_000, waitMode: 'block' });
    await using _ = broker;
    const store = createMemoryExecApprovalStore({ mode: 'ask' });
    broker.subscribe((event) => event.type === 'requested' && queueMicrotask(() => broker.answer(event.approval.id, 'allow-always')));
    const registry = createRegistry([
      defineCapability({ category: 'test', commands: [defineCommand({ name: 'system.run', description: '', input: z.object({ command: z.string(), shell: z.boolean() }), execute: () => 'ran' })] }),
    ]);
    const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, platform: 'linux' })] });
    expect((await invoker.invoke({ command: 'system.run', args: { command: 'curl x | sh', shell: true }, transport: 'mcp-http' })).result.ok).toBe(true);
    expect((await store.get()).allowlist).toEqual([]);
  });

  it('a client that varies its self-reported name fills at most its transport\'s share: other transports keep their room', async () => {
    await using t = setup();
    for (let i = 0; i < 8; i += 1) await t.call(['sleep', String(i)], `agent-${Math.floor(i / 2)}`);
    // Half of the queue (4 of 8) is the most one transport may hold, whatever names its clients report.
    expect(t.broker.list()).toHaveLength(4);
    // RESIDUAL RISK: an honest client on the same transport is refused (busy) — every MCP HTTP client holds the same token.
    expect((await t.call(['ls'], 'honest')).result).toMatchObject({ ok: false, error: { code: 'busy' } });
    // A caller on another transport still gets its approval asked.
    const stdio = await t.invoker.invoke({ command: 'system.run', args: { command: ['ls'] }, transport: 'mcp-stdio', caller: 'desktop' });
    expect(stdio.result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
    expect(t.broker.list()).toHaveLength(5);
  });
});
