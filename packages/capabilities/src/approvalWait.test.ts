import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApprovalBroker, type ApprovalBrokerOptions } from './approvalBroker.js';
import { defineCapability, defineCommand, type ElicitationRequest, type InvocationRequest, type ProgressUpdate } from './contract.js';
import { createExecApprovalHook } from './execApprovalHook.js';
import { createMemoryExecApprovalStore } from './execPolicy.js';
import { createInvoker, type InvokeOptions } from './pipeline.js';
import { createRegistry } from './registry.js';
import { failureOf, nextPending } from '../../../tests/support/invocation.js';

const execInput = z.object({ command: z.union([z.array(z.string()), z.string()]), cwd: z.string().optional(), shell: z.boolean().optional() });

function setup(brokerOptions: ApprovalBrokerOptions = {}) {
  const ran: unknown[] = [];
  const broker = createApprovalBroker({ timeoutMs: 60_000, ...brokerOptions });
  const store = createMemoryExecApprovalStore({ mode: 'ask' });
  const registry = createRegistry([
    defineCapability({
      category: 'test',
      commands: [defineCommand({ name: 'system.run', description: '', input: execInput, execute: (args) => (ran.push(args), 'ran') })],
    }),
  ]);
  const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, resolveExecutable: (program) => `/usr/bin/${program}`, platform: 'linux' })] });
  const call = (args: unknown, extra: Partial<InvocationRequest> = {}, options: InvokeOptions = {}) =>
    invoker.invoke({ command: 'system.run', args, transport: 'mcp-http', caller: 'agent', ...extra }, options);
  return { ran, broker, call, [Symbol.asyncDispose]: () => broker.close() };
}

describe('approval wait modes', () => {
  it("auto with no hold returns at once for a caller with neither progress nor elicitation, and an identical retry runs exactly once after 'allow'", async () => {
    await using t = setup({ holdMs: 0 });
    const first = failureOf((await t.call({ command: ['git', 'push'] })).result);
    expect(first.code).toBe('approval_pending');
    const [pending] = t.broker.list();
    expect(first.data).toMatchObject({ approvalId: pending!.id, argsHash: pending!.argsHash, answerWith: `capnode approvals allow ${pending!.id}` });
    expect(pending!.argsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(first.message).toContain(`capnode approvals allow ${pending!.id}`);
    expect(first.message).toContain('Approvals page of the capnode dashboard');
    // Retry while still pending: the same approval again, not a second one.
    expect(failureOf((await t.call({ command: ['git', 'push'] })).result).data).toMatchObject({ approvalId: pending!.id });
    expect(t.broker.list()).toHaveLength(1);
    // Another caller, or other arguments, do not see it.
    expect(failureOf((await t.call({ command: ['git', 'push'] }, { caller: 'someone-else' })).result).data?.approvalId).not.toBe(pending!.id);
    expect(failureOf((await t.call({ command: ['git', 'push', '--force'] })).result).data?.approvalId).not.toBe(pending!.id);
    expect(t.ran).toEqual([]);
    t.broker.resolve(pending!.id, 'allow-once');
    expect((await t.call({ command: ['git', 'push'] })).result.ok).toBe(true);
    expect(t.ran).toHaveLength(1);
    // Exactly once: the next identical call asks again.
    expect(failureOf((await t.call({ command: ['git', 'push'] })).result).code).toBe('approval_pending');
    expect(t.ran).toHaveLength(1);
  });

  it('a retry after deny gets denied, after no answer gets approval_timeout', async () => {
    await using t = setup({ timeoutMs: 80, holdMs: 0 });
    expect(failureOf((await t.call({ command: ['ls'] })).result).code).toBe('approval_pending');
    t.broker.resolve((await nextPending(t.broker)).id, 'deny');
    expect(failureOf((await t.call({ command: ['ls'] })).result).code).toBe('denied');
    expect(failureOf((await t.call({ command: ['ls', '-l'] })).result).code).toBe('approval_pending');
    await new Promise((resolve) => setTimeout(resolve, 120));
    const timedOut = failureOf((await t.call({ command: ['ls', '-l'] })).result);
    expect(timedOut.code).toBe('approval_timeout');
    expect(t.ran).toEqual([]);
  });

  it('auto holds a caller without progress for holdMs: an answer within the hold runs the call in that one call', async () => {
    await using t = setup({ holdMs: 5_000 });
    const held = t.call({ command: ['git', 'push'] });
    const pending = await nextPending(t.broker);
    t.broker.resolve(pending.id, 'allow-once');
    expect((await held).result.ok).toBe(true);
    expect(t.ran).toHaveLength(1);
    // The answer was used by the held call: nothing is kept for a retry, the next call asks again.
    const again = t.call({ command: ['git', 'push'] });
    t.broker.resolve((await nextPending(t.broker)).id, 'deny');
    expect(failureOf((await again).result).code).toBe('denied');
    expect(t.ran).toHaveLength(1);
  });

  it('a hold that ends without an answer returns approval_pending naming the dashboard, and the retry finds the answer', async () => {
    let hold = 60;
    await using t = setup({ holdMs: () => hold });
    const started = Date.now();
    const first = failureOf((await t.call({ command: ['ls'] })).result);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(first.code).toBe('approval_pending');
    expect(first.message).toContain('dashboard');
    expect(first.data).toMatchObject({ answerOn: expect.stringContaining('dashboard') });
    hold = 0;
    t.broker.resolve(first.data!.approvalId as string, 'allow-once');
    expect((await t.call({ command: ['ls'] })).result.ok).toBe(true);
    expect(t.ran).toHaveLength(1);
  });

  it('a caller that cancels during the hold stops at once; its request stays open for a retry', async () => {
    await using t = setup({ holdMs: 10_000 });
    const controller = new AbortController();
    const held = t.call({ command: ['ls'] }, {}, { signal: controller.signal });
    const pending = await nextPending(t.broker);
    controller.abort(new Error('client cancelled'));
    expect(failureOf((await held).result).code).toBe('cancelled');
    expect(t.broker.list().map((p) => p.id)).toEqual([pending.id]);
  });

  it('auto blocks for a caller that asked for progress, reporting progress at once and every interval', async () => {
    await using t = setup({ progressIntervalMs: 20 });
    const updates: ProgressUpdate[] = [];
    const call = t.call({ command: ['make'] }, {}, { onProgress: (update) => updates.push(update) });
    const pending = await nextPending(t.broker);
    await new Promise((resolve) => setTimeout(resolve, 90));
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates.map((u) => u.progress)).toEqual(updates.map((_, i) => i + 1));
    expect(updates[0]!.message).toContain(`capnode approvals allow ${pending.id}`);
    t.broker.resolve(pending.id, 'allow-once');
    expect((await call).result.ok).toBe(true);
    const count = updates.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(updates).toHaveLength(count);
  });

  it("auto blocks for the CLI and a gateway; 'block' and 'return' override it", async () => {
    await using t = setup();
    const cli = t.call({ command: ['ls'] }, { transport: 'cli' });
    t.broker.resolve((await nextPending(t.broker)).id, 'allow-once');
    expect((await cli).result.ok).toBe(true);
    const gateway = t.call({ command: ['ls'] }, { transport: 'gateway' });
    t.broker.resolve((await nextPending(t.broker)).id, 'allow-once');
    expect((await gateway).result.ok).toBe(true);
    let mode: 'block' | 'return' = 'block';
    await using u = setup({ waitMode: () => mode });
    const blocked = u.call({ command: ['ls'] });
    u.broker.resolve((await nextPending(u.broker)).id, 'allow-once');
    expect((await blocked).result.ok).toBe(true);
    mode = 'return';
    expect(failureOf((await u.call({ command: ['ls'] }, { transport: 'cli' })).result).code).toBe('approval_pending');
  });

  it('tells denied, approval_timeout and cancelled apart', async () => {
    await using t = setup({ timeoutMs: 60, waitMode: 'block' });
    const denied = t.call({ command: ['a'] });
    t.broker.resolve((await nextPending(t.broker)).id, 'deny');
    expect(failureOf((await denied).result).code).toBe('denied');
    expect(failureOf((await t.call({ command: ['b'] })).result).code).toBe('approval_timeout');
    const controller = new AbortController();
    const cancelled = t.call({ command: ['c'] }, {}, { signal: controller.signal });
    await nextPending(t.broker);
    controller.abort();
    expect(failureOf((await cancelled).result).code).toBe('cancelled');
    expect(t.broker.list()).toEqual([]);
    // Past this caller's share of the queue: busy, not denied.
    await using q = setup({ maxPending: 4, maxPendingPerCaller: 1, waitMode: 'block' });
    void q.call({ command: ['x'] });
    await nextPending(q.broker);
    expect(failureOf((await q.call({ command: ['y'] })).result).code).toBe('busy');
  });

  it('puts the question through the client when it can elicit; its answer wins and the host prompt is withdrawn', async () => {
    await using t = setup();
    const asked: ElicitationRequest[] = [];
    let answer: (decision: string) => void = () => {};
    const elicit = (request: ElicitationRequest) => {
      asked.push(request);
      return new Promise<{ action: 'accept'; content: { decision: string } }>((resolve) => (answer = (decision) => resolve({ action: 'accept', content: { decision } })));
    };
    const call = t.call({ command: ['git', 'status\u202e'], cwd: '/repo' }, {}, { elicit });
    const pending = await nextPending(t.broker);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toContain(pending.id);
    expect(asked[0]!.message).toContain('caller: agent (self-reported)');
    expect(asked[0]!.message).toContain('cwd: /repo');
    expect(asked[0]!.message).toContain('\\u{202e}');
    expect(asked[0]!.message).not.toContain('\u202e');
    expect(asked[0]!.requestedSchema.properties.decision).toMatchObject({ oneOf: [{ const: 'allow-once' }, { const: 'deny' }] });
    answer('allow-once');
    expect((await call).result.ok).toBe(true);
    expect(t.broker.list()).toEqual([]);

    const declined = t.call({ command: ['rm'] }, {}, { elicit: async () => ({ action: 'decline' }) });
    expect(failureOf((await declined).result).code).toBe('denied');
  });

  it('withdraws the client question when the host answers first, and keeps waiting when the client cannot ask', async () => {
    await using t = setup();
    let withdrawn: unknown;
    const elicit = (_request: ElicitationRequest, { signal }: { signal: AbortSignal }) =>
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => ((withdrawn = signal.reason), reject(signal.reason))));
    const call = t.call({ command: ['ls'] }, {}, { elicit });
    t.broker.resolve((await nextPending(t.broker)).id, 'deny');
    expect(failureOf((await call).result).code).toBe('denied');
    expect(withdrawn).toBeInstanceOf(Error);

    const failing = t.call({ command: ['ls', '-a'] }, {}, { elicit: async () => Promise.reject(new Error('Client does not support elicitation')) });
    const pending = await nextPending(t.broker);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.broker.list()).toHaveLength(1);
    t.broker.resolve(pending.id, 'allow-once');
    expect((await failing).result.ok).toBe(true);
  });

  it('does not ask through the client when elicitation is turned off, and then returns for a caller without progress', async () => {
    await using t = setup({ elicitation: () => false, holdMs: 0 });
    let asked = 0;
    const result = await t.call({ command: ['ls'] }, {}, { elicit: async () => ((asked += 1), { action: 'accept', content: { decision: 'allow-once' } }) });
    expect(failureOf(result.result).code).toBe('approval_pending');
    expect(asked).toBe(0);
    expect(t.ran).toEqual([]);
  });

  it('a client that answers on a retry (input_required) gets the question with approval_pending, and its retry carrying the answer runs once', async () => {
    await using t = setup();
    const asked: ElicitationRequest[] = [];
    // The first round records the question; the retry answers the question it was asked.
    const firstRound = async (request: ElicitationRequest): Promise<never> => {
      asked.push(request);
      throw new Error('input required');
    };
    const first = failureOf((await t.call({ command: ['git', 'push'] }, {}, { elicit: firstRound, elicitOnRetry: true, onProgress: () => {} })).result);
    expect(first.code).toBe('approval_pending');
    const [pending] = t.broker.list();
    expect(asked).toHaveLength(1);
    expect(asked[0]!.key).toBe(`approval:${pending!.id}`);
    const retry = (decision: string) => async (request: ElicitationRequest) => {
      if (request.key !== asked[0]!.key) throw new Error('another question');
      return { action: 'accept' as const, content: { decision } };
    };
    expect((await t.call({ command: ['git', 'push'] }, {}, { elicit: retry('allow-once'), elicitOnRetry: true })).result.ok).toBe(true);
    expect(t.ran).toHaveLength(1);
    expect(t.broker.list()).toEqual([]);
    // A denial given on the retry refuses it.
    expect(failureOf((await t.call({ command: ['rm'] }, {}, { elicit: firstRound, elicitOnRetry: true })).result).code).toBe('approval_pending');
    asked.splice(0, 1);
    expect(failureOf((await t.call({ command: ['rm'] }, {}, { elicit: retry('deny'), elicitOnRetry: true })).result).code).toBe('denied');
    expect(t.ran).toHaveLength(1);
  });
});
