import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApprovalBroker, type ApprovalBroker, type ApprovalDecision, type PendingApproval } from './approvalBroker.js';
import { defineCapability, defineCommand, type InvocationRequest } from './contract.js';
import { createExecApprovalHook, describeExecArgs, isExecGated } from './execApprovalHook.js';
import { createMemoryExecApprovalStore, type ExecApprovalPolicy, type ExecApprovalStore } from './execPolicy.js';
import { createInvoker } from './pipeline.js';
import { createRegistry } from './registry.js';

const execInput = z.object({ command: z.union([z.array(z.string()), z.string()]), cwd: z.string().optional(), shell: z.boolean().optional() });

function setup(policy: Partial<ExecApprovalPolicy> = {}, options: { timeoutMs?: number; store?: ExecApprovalStore } = {}) {
  const ran: unknown[] = [];
  const store = options.store ?? createMemoryExecApprovalStore(policy);
  const broker = createApprovalBroker({ timeoutMs: options.timeoutMs ?? 60_000, waitMode: 'block' });
  const registry = createRegistry([
    defineCapability({
      category: 'test',
      commands: [
        // Stands in for system.run: records instead of running, so every policy path is cheap to check.
        defineCommand({ name: 'System.Run', description: '', input: execInput, execute: (args) => (ran.push(args), 'ran') }),
        defineCommand({ name: 'tool.exec', description: '', approval: 'exec', input: execInput, execute: (args) => (ran.push(args), 'ran') }),
        defineCommand({ name: 'tool.plain', description: '', execute: () => 'plain' }),
      ],
    }),
  ]);
  const resolveExecutable = (program: string) => (program.includes('/') ? program : `/usr/bin/${program}`);
  const hook = createExecApprovalHook({ store, broker, resolveExecutable, platform: 'linux' });
  const invoker = createInvoker({ registry, hooks: [hook] });
  const call = (args: unknown, extra: Partial<InvocationRequest> = {}, signal?: AbortSignal) =>
    invoker.invoke({ command: 'system.run', args, transport: 'mcp-http', caller: 'test-client', ...extra }, signal ? { signal } : {});
  return { ran, store, broker, invoker, call, [Symbol.asyncDispose]: () => broker.close() };
}

/** Answers every new approval request with `decision` and records what was asked. */
function answerWith(broker: ApprovalBroker, decision: ApprovalDecision): PendingApproval[] {
  const asked: PendingApproval[] = [];
  broker.subscribe((event) => {
    if (event.type !== 'requested') return;
    asked.push(event.approval);
    queueMicrotask(() => broker.resolve(event.approval.id, decision));
  });
  return asked;
}

const errorOf = (outcome: { result: { ok: boolean } }) => (outcome.result as unknown as { error: { code: string; message: string } }).error;

describe('createExecApprovalHook', () => {
  it("mode 'full' runs everything, shell lines included, without asking", async () => {
    await using t = setup({ mode: 'full' });
    const asked = answerWith(t.broker, 'deny');
    expect((await t.call({ command: ['rm', '-rf', '/tmp/x'] })).result.ok).toBe(true);
    expect((await t.call({ command: 'ls | wc -l', shell: true })).result.ok).toBe(true);
    expect(asked).toHaveLength(0);
    expect(t.ran).toHaveLength(2);
  });

  it("mode 'deny' refuses everything, allowlisted too, naming the mode and the way out", async () => {
    await using t = setup({ mode: 'deny', allowlist: ['git status*'] });
    const outcome = await t.call({ command: 'git status' });
    expect(errorOf(outcome).code).toBe('denied');
    expect(errorOf(outcome).message).toMatch(/System\.Run `git status` is refused: exec approvals are in mode 'deny'.*system\.execApprovals\.set/);
    expect(t.ran).toHaveLength(0);
  });

  it("mode 'allowlist' runs matching commands and refuses the rest without asking", async () => {
    await using t = setup({ mode: 'allowlist', allowlist: ['git status*', '/usr/bin/ls', 'npm *'] });
    const asked = answerWith(t.broker, 'allow-once');
    expect((await t.call({ command: ['git', 'status', '--short'] })).result.ok).toBe(true);
    expect((await t.call({ command: 'ls' })).result.ok).toBe(true);
    expect((await t.call({ command: 'npm run build' })).result.ok).toBe(true);
    const refused = await t.call({ command: ['git', 'push'] });
    expect(errorOf(refused).code).toBe('denied');
    expect(errorOf(refused).message).toMatch(/matches no exec allowlist pattern \(exec approvals mode 'allowlist'\).*\{"add":\["git \*"\]\}/);
    const shell = await t.call({ command: 'git status', shell: true });
    expect(errorOf(shell).message).toMatch(/shell command lines are never allowlisted/);
    expect(asked).toHaveLength(0);
    expect(t.ran).toHaveLength(3);
  });

  it("mode 'ask' runs allowlisted commands without asking", async () => {
    await using t = setup({ mode: 'ask', allowlist: ['git status*'] });
    const asked = answerWith(t.broker, 'deny');
    expect((await t.call({ command: 'git status' })).result.ok).toBe(true);
    expect(asked).toHaveLength(0);
  });

  it("mode 'ask' runs a command the user allows once, and asks again next time", async () => {
    await using t = setup();
    const asked = answerWith(t.broker, 'allow-once');
    expect((await t.call({ command: ['git', 'push'], cwd: '/repo' })).result.ok).toBe(true);
    expect((await t.call({ command: ['git', 'push'], cwd: '/repo' })).result.ok).toBe(true);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatchObject({ command: 'System.Run', commandLine: 'git push', argv: ['git', 'push'], cwd: '/repo', caller: 'test-client', transport: 'mcp-http' });
    expect((await t.store.get()).allowlist).toEqual([]);
  });

  it("'allow-always' persists the exact command to the allowlist, so it runs without asking next time", async () => {
    await using t = setup();
    const asked = answerWith(t.broker, 'allow-always');
    expect((await t.call({ command: ['git', 'commit', '-m', 'fix *everything*'] })).result.ok).toBe(true);
    expect(await t.store.get()).toEqual({ mode: 'ask', allowlist: ['git commit -m "fix \\*everything\\*"'] });
    expect((await t.call({ command: ['git', 'commit', '-m', 'fix *everything*'] })).result.ok).toBe(true);
    expect(asked).toHaveLength(1);
    // The stars were literal: a different message still asks.
    await t.call({ command: ['git', 'commit', '-m', 'fix nothing'] });
    expect(asked).toHaveLength(2);
    expect((await t.store.get()).allowlist).toHaveLength(2);
  });

  it("'allow-always' for a shell line runs it once and adds no pattern", async () => {
    await using t = setup();
    const asked = answerWith(t.broker, 'allow-always');
    expect((await t.call({ command: 'echo hi | wc -c', shell: true })).result.ok).toBe(true);
    expect(asked[0]).toMatchObject({ commandLine: 'echo hi | wc -c', shell: true });
    expect((await t.store.get()).allowlist).toEqual([]);
  });

  it('a user denial refuses the call as denied', async () => {
    await using t = setup();
    answerWith(t.broker, 'deny');
    const outcome = await t.call({ command: 'rm -rf /' });
    expect(errorOf(outcome)).toMatchObject({ code: 'denied', message: expect.stringMatching(/^System\.Run `rm -rf \/` was denied by the user/) });
    expect(t.ran).toHaveLength(0);
  });

  it('no answer in time refuses the call as approval_timeout', async () => {
    await using t = setup({}, { timeoutMs: 50 });
    const outcome = await t.call({ command: 'git push' });
    expect(errorOf(outcome).code).toBe('approval_timeout');
    expect(errorOf(outcome).message).toMatch(/nobody answered its approval request \([a-z2-7]{10}\) within 50 ms, which counts as a denial/);
    expect(t.ran).toHaveLength(0);
  });

  it('a cancelled call withdraws its pending approval', async () => {
    await using t = setup();
    const controller = new AbortController();
    const pending = t.call({ command: 'git push' }, {}, controller.signal);
    for (let i = 0; i < 200 && t.broker.list().length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(t.broker.list()).toHaveLength(1);
    controller.abort();
    expect(errorOf(await pending).code).toBe('cancelled');
    expect(t.broker.list()).toEqual([]);
    expect(t.ran).toHaveLength(0);
  });

  it('gates commands annotated approval: exec, and leaves other commands alone', async () => {
    await using t = setup({ mode: 'deny' });
    expect(errorOf(await t.invoker.invoke({ command: 'tool.exec', args: { command: 'ls' }, transport: 'internal' })).code).toBe('denied');
    expect((await t.invoker.invoke({ command: 'tool.plain', transport: 'internal' })).result.ok).toBe(true);
  });

  it('fails closed when the store cannot be read or holds an invalid policy', async () => {
    const broken: ExecApprovalStore = {
      get: () => {
        throw new Error('disk on fire');
      },
      set: async () => {},
    };
    await using t = setup({}, { store: broken });
    const outcome = await t.call({ command: 'ls' });
    expect(errorOf(outcome)).toMatchObject({ code: 'denied', message: expect.stringMatching(/could not be read/) });
    expect(JSON.stringify(outcome)).not.toContain('disk on fire');
    await using u = setup({}, { store: { get: () => ({ mode: 'yolo' }) as unknown as ExecApprovalPolicy, set: async () => {} } });
    expect(errorOf(await u.call({ command: 'ls' })).message).toMatch(/settings are invalid/);
  });

  it('reports unusable exec arguments as invalid_arguments', async () => {
    await using t = setup({ mode: 'full' });
    expect(errorOf(await t.call({ command: 'ls | wc' })).message).toMatch(/shell syntax/);
    expect(errorOf(await t.call({ command: [] })).code).toBe('invalid_arguments');
    expect(errorOf(await t.call({ command: ['ls'], shell: true })).message).toMatch(/shell: true takes the command as one command-line string/);
  });
});

describe('describeExecArgs and isExecGated', () => {
  it('reads argv, command lines and shell lines', () => {
    expect(describeExecArgs({ command: ['a', 'b c'], cwd: '/x' })).toEqual({ target: { argv: ['a', 'b c'] }, commandLine: 'a "b c"', cwd: '/x' });
    expect(describeExecArgs({ command: 'a "b c"' })).toEqual({ target: { argv: ['a', 'b c'] }, commandLine: 'a "b c"' });
    expect(describeExecArgs({ command: 'a | b', shell: true })).toEqual({ target: { argv: [], shell: true }, commandLine: 'a | b' });
    expect(() => describeExecArgs({})).toThrow(/command must be/);
    expect(() => describeExecArgs({ command: [''] })).toThrow(/program name/);
  });

  it('gates system.run by name and approval: exec by annotation', () => {
    const registry = createRegistry([
      defineCapability({
        category: 'x',
        commands: [
          defineCommand({ name: 'SYSTEM.RUN', description: '', execute: () => '' }),
          defineCommand({ name: 'x.exec', description: '', approval: 'exec', execute: () => '' }),
          defineCommand({ name: 'x.other', description: '', execute: () => '' }),
        ],
      }),
    ]);
    expect(registry.commands().map(isExecGated)).toEqual([true, true, false]);
  });
});
