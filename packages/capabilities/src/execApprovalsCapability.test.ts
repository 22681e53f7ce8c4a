import { describe, expect, it } from 'vitest';
import { createApprovalBroker, type ApprovalBroker, type ApprovalDecision, type PendingApproval } from './approvalBroker.js';
import type { Transport } from './contract.js';
import { createExecApprovalsCapability } from './execApprovalsCapability.js';
import { createMemoryExecApprovalStore, type ExecApprovalPolicy } from './execPolicy.js';
import { createInvoker } from './pipeline.js';
import { createRegistry } from './registry.js';

async function eventuallyPending(broker: ApprovalBroker): Promise<void> {
  for (let i = 0; i < 400 && broker.list().length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  if (broker.list().length === 0) throw new Error('no approval became pending');
}

function setup(policy: Partial<ExecApprovalPolicy> = {}, answer?: ApprovalDecision, timeoutMs = 60_000) {
  const store = createMemoryExecApprovalStore(policy);
  const broker = createApprovalBroker({ timeoutMs, waitMode: 'block' });
  const asked: PendingApproval[] = [];
  broker.subscribe((event) => {
    if (event.type !== 'requested') return;
    asked.push(event.approval);
    if (answer) queueMicrotask(() => broker.resolve(event.approval.id, answer));
  });
  const invoker = createInvoker({ registry: createRegistry([createExecApprovalsCapability({ store, broker })]) });
  const call = (command: string, args: unknown, transport: Transport = 'mcp-http') => invoker.invoke({ command, args, transport, caller: 'agent' });
  return { store, broker, asked, call, [Symbol.asyncDispose]: () => broker.close() };
}

describe('system.execApprovals.get|set', () => {
  it('get reads the policy from the store', async () => {
    await using t = setup({ mode: 'allowlist', allowlist: ['git status*'] });
    const outcome = await t.call('system.execApprovals.get', {});
    expect(outcome.result).toMatchObject({ ok: true, structured: { mode: 'allowlist', allowlist: ['git status*'] } });
  });

  it('set from MCP asks the user first, then writes through the store', async () => {
    await using t = setup({}, 'allow-once');
    const outcome = await t.call('system.execApprovals.set', { mode: 'allowlist', add: ['npm *', 'git status*'] });
    expect(outcome.result).toMatchObject({ ok: true, structured: { mode: 'allowlist', allowlist: ['npm *', 'git status*'], changed: true } });
    expect(await t.store.get()).toEqual({ mode: 'allowlist', allowlist: ['npm *', 'git status*'] });
    expect(t.asked).toHaveLength(1);
    expect(t.asked[0]).toMatchObject({ command: 'system.execApprovals.set', summary: "change exec approvals: mode ask → allowlist; allow 'npm *', 'git status*'", caller: 'agent', transport: 'mcp-http' });
  });

  it('an env value or cwd with spaces and commas cannot pass for further entries in the summary', async () => {
    await using t = setup({}, 'deny');
    await t.call('system.execApprovals.set', { add: [{ pattern: 'make', env: { CC: "gcc, 'ls' with env X=1" } }, { pattern: 'ls', cwd: "/tmp/a, 'rm *' in /x" }] });
    expect(t.asked[0]!.summary).toBe(`change exec approvals: allow 'make' with env CC="gcc, 'ls' with env X=1", 'ls' in "/tmp/a, 'rm *' in /x"`);
  });

  it('set refused by the user or unanswered changes nothing', async () => {
    await using t = setup({}, 'deny');
    const denied = await t.call('system.execApprovals.set', { mode: 'full' });
    expect(denied.result).toMatchObject({ ok: false, error: { code: 'denied' } });
    expect((await t.store.get()).mode).toBe('ask');
    await using u = setup({}, undefined, 50);
    const unanswered = await u.call('system.execApprovals.set', { mode: 'full' }, 'gateway');
    expect(unanswered.result).toMatchObject({ ok: false, error: { code: 'approval_timeout' } });
    expect((await u.store.get()).mode).toBe('ask');
  });

  it('set does not ask in mode full, nor trusted local transports, nor when nothing changes', async () => {
    await using t = setup({ mode: 'full' });
    expect((await t.call('system.execApprovals.set', { add: ['ls'] })).result.ok).toBe(true);
    await using u = setup();
    expect((await u.call('system.execApprovals.set', { mode: 'deny' }, 'cli')).result.ok).toBe(true);
    expect((await u.call('system.execApprovals.set', { mode: 'ask' }, 'internal')).result.ok).toBe(true);
    expect((await u.call('system.execApprovals.set', { mode: 'ask' }, 'mcp-http')).result).toMatchObject({ ok: true, structured: { changed: false } });
    expect([...t.asked, ...u.asked]).toEqual([]);
  });

  it('set replaces, adds and removes patterns', async () => {
    await using t = setup({ allowlist: ['a', 'b'] }, 'allow-once');
    await t.call('system.execApprovals.set', { allowlist: ['x', 'y', 'z'] });
    expect((await t.store.get()).allowlist).toEqual(['x', 'y', 'z']);
    await t.call('system.execApprovals.set', { remove: ['y'], add: ['x', 'w'] });
    expect((await t.store.get()).allowlist).toEqual(['x', 'z', 'w']);
  });

  it('set rejects invalid modes, invalid patterns and empty changes with clear messages', async () => {
    await using t = setup({}, 'allow-once');
    expect((await t.call('system.execApprovals.set', { mode: 'yolo' })).result).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    const star = await t.call('system.execApprovals.set', { add: ['*'] });
    expect(star.result).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: expect.stringMatching(/add\.0: .*cannot contain '\*'/) } });
    expect((await t.call('system.execApprovals.set', {})).result).toMatchObject({ ok: false, error: { message: expect.stringMatching(/at least one of mode/) } });
    expect(t.asked).toEqual([]);
  });

  it('a policy change approved after a stricter one: an approved "add" keeps the mode that replaced it', async () => {
    await using t = setup({ mode: 'ask' });
    const pending = t.call('system.execApprovals.set', { add: ['git status *'] });
    await eventuallyPending(t.broker);
    await t.call('system.execApprovals.set', { mode: 'deny' }, 'cli');
    t.broker.resolve(t.broker.list()[0]!.id, 'allow-once');
    expect((await pending).result).toMatchObject({ ok: true, structured: { mode: 'deny', allowlist: ['git status *'] } });
    expect(await t.store.get()).toEqual({ mode: 'deny', allowlist: ['git status *'] });
  });

  it('a mode change approved after the mode changed meanwhile is refused and changes nothing', async () => {
    await using t = setup({ mode: 'ask' });
    const pending = t.call('system.execApprovals.set', { mode: 'full', add: ['ls'] });
    await eventuallyPending(t.broker);
    await t.call('system.execApprovals.set', { mode: 'deny' }, 'cli');
    t.broker.resolve(t.broker.list()[0]!.id, 'allow-once');
    expect((await pending).result).toMatchObject({ ok: false, error: { code: 'failed', message: expect.stringMatching(/mode changed while this change waited for approval/) } });
    expect(await t.store.get()).toEqual({ mode: 'deny', allowlist: [] });
  });

  it('an allowlist replacement approved after the allowlist changed meanwhile is refused', async () => {
    await using t = setup({ allowlist: ['a'] });
    const pending = t.call('system.execApprovals.set', { allowlist: ['a', 'b'] });
    await eventuallyPending(t.broker);
    await t.call('system.execApprovals.set', { remove: ['a'] }, 'cli');
    t.broker.resolve(t.broker.list()[0]!.id, 'allow-once');
    expect((await pending).result).toMatchObject({ ok: false, error: { code: 'failed' } });
    expect((await t.store.get()).allowlist).toEqual([]);
  });

  it('adds and removes scoped entries; a string removes every entry with that pattern', async () => {
    await using t = setup({}, 'allow-once');
    const scoped = { pattern: 'make *', cwd: '/home/me/repo' };
    await t.call('system.execApprovals.set', { add: ['make *', scoped, { pattern: 'env', env: { A: '1' } }] });
    expect((await t.store.get()).allowlist).toEqual(['make *', scoped, { pattern: 'env', env: { A: '1' } }]);
    expect(t.asked[0]!.summary).toBe('change exec approvals: allow \'make *\', \'make *\' in "/home/me/repo", \'env\' with env A="1"');
    await t.call('system.execApprovals.set', { remove: [{ pattern: 'env', env: { A: '1' } }] });
    expect((await t.store.get()).allowlist).toEqual(['make *', scoped]);
    await t.call('system.execApprovals.set', { remove: ['make *'] });
    expect((await t.store.get()).allowlist).toEqual([]);
  });

  it("in mode 'full', adding an entry with code-loading variables still asks", async () => {
    await using t = setup({ mode: 'full' }, 'deny');
    const outcome = await t.call('system.execApprovals.set', { add: [{ pattern: 'git *', env: { GIT_SSH_COMMAND: 'sh -c id' } }] });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'denied' } });
    expect(t.asked).toHaveLength(1);
    expect((await t.store.get()).allowlist).toEqual([]);
  });

  it('both commands are served to gateways (not localOnly)', () => {
    const capability = createExecApprovalsCapability({ store: createMemoryExecApprovalStore(), broker: createApprovalBroker({ waitMode: 'block' }) });
    expect(capability.commands.map((c) => [c.name, c.localOnly ?? false])).toEqual([
      ['system.execApprovals.get', false],
      ['system.execApprovals.set', false],
    ]);
  });

  it('an MCP caller without progress is held, then answered approval_pending; one with progress waits for the answer', async () => {
    const store = createMemoryExecApprovalStore({ mode: 'ask' });
    await using broker = createApprovalBroker({ timeoutMs: 60_000, waitMode: 'auto', holdMs: 50 });
    const invoker = createInvoker({ registry: createRegistry([createExecApprovalsCapability({ store, broker })]) });
    const request = { command: 'system.execApprovals.set', args: { mode: 'full' }, transport: 'mcp-http' as const, caller: 'agent' };
    const held = await invoker.invoke(request);
    expect(held.result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
    const progress: unknown[] = [];
    const waiting = invoker.invoke({ ...request, args: { mode: 'allowlist' } }, { onProgress: (update) => progress.push(update) });
    for (let i = 0; i < 400 && broker.list().length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 150)); // well past the hold
    const pending = broker.list().find((entry) => entry.summary?.includes('allowlist'));
    expect(pending).toBeDefined();
    broker.resolve(pending!.id, 'allow-once');
    expect((await waiting).result).toMatchObject({ ok: true });
    expect((await store.get()).mode).toBe('allowlist');
  });
});
