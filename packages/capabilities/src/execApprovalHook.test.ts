import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApprovalBroker, type ApprovalBroker, type ApprovalDecision, type PendingApproval } from './approvalBroker.js';
import { defineCapability, defineCommand, type InvocationRequest } from './contract.js';
import { createExecApprovalHook, describeExecArgs, isExecGated } from './execApprovalHook.js';
import { hashInvocationArgs } from './internal/argsHash.js';
import { createMemoryExecApprovalStore, type ExecApprovalPolicy, type ExecApprovalStore } from './execPolicy.js';
import { createInvoker } from './pipeline.js';
import { createRegistry } from './registry.js';

const execInput = z.object({
  command: z.union([z.array(z.string()), z.string()]),
  cwd: z.string().optional(),
  shell: z.boolean().optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().optional(),
});

/** Stands in for realpath: `/link` is a symlink to `/real`, `/work/out` to `/etc`, relative paths start at `/home/me`. */
const fakeRealpath = (cwd: string) => {
  const absolute = cwd.startsWith('/') ? cwd : `/home/me/${cwd}`;
  return absolute.replace(/^\/link(?=\/|$)/, '/real').replace(/^\/work\/out(?=\/|$)/, '/etc');
};

function setup(policy: Partial<ExecApprovalPolicy> = {}, options: { timeoutMs?: number; store?: ExecApprovalStore; noCwdResolver?: boolean } = {}) {
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
  const hook = createExecApprovalHook({
    store,
    broker,
    resolveExecutable,
    ...(options.noCwdResolver ? {} : { resolveCwd: fakeRealpath }),
    defaultCwd: '/home/me',
    platform: 'linux',
  });
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
    expect(errorOf(refused).message).toMatch(/no exec allowlist entry covers it \(pattern, cwd scope and env; exec approvals mode 'allowlist'\).*\{"add":\["git \*"\]\}/);
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
    expect(await t.store.get()).toEqual({ mode: 'ask', allowlist: [`git commit -m 'fix *everything*'`] });
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

describe('createExecApprovalHook: what runs is what was approved', () => {
  it('the approval request carries resolved path, real cwd, every env key (secrets masked), timeout and an argument hash', async () => {
    await using t = setup();
    const asked = answerWith(t.broker, 'allow-once');
    const args = { command: ['git', 'push'], cwd: '/link/repo', env: { GITHUB_TOKEN: 'ghp_secret', COLOR: 'never' }, timeoutMs: 5000 };
    expect((await t.call(args)).result.ok).toBe(true);
    expect(asked[0]).toMatchObject({
      command: 'System.Run',
      commandLine: 'git push',
      argv: ['git', 'push'],
      resolvedPath: '/usr/bin/git',
      cwd: '/real/repo',
      env: { GITHUB_TOKEN: '[masked, 10 characters]', COLOR: 'never' },
      timeoutMs: 5000,
      caller: 'test-client',
      transport: 'mcp-http',
    });
    expect(JSON.stringify(asked[0])).not.toContain('ghp_secret');
    expect(asked[0]!.argsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    await t.call({ timeoutMs: 5000, env: { COLOR: 'never', GITHUB_TOKEN: 'ghp_secret' }, cwd: '/link/repo', command: ['git', 'push'] });
    await t.call({ ...args, command: ['git', 'push', '--force'] });
    expect(asked[1]!.argsHash).toBe(asked[0]!.argsHash);
    expect(asked[2]!.argsHash).not.toBe(asked[0]!.argsHash);
    expect(await hashInvocationArgs('System.Run', { b: 1, a: [2, { d: 1, c: 2 }] })).toBe(await hashInvocationArgs('System.Run', { a: [2, { c: 2, d: 1 }], b: 1 }));
  });

  it('a call without cwd shows the default directory it runs in', async () => {
    await using t = setup();
    const asked = answerWith(t.broker, 'allow-once');
    await t.call({ command: 'git push' });
    expect(asked[0]).toMatchObject({ cwd: '/home/me' });
  });

  it('an entry scoped to a directory covers calls inside it (real paths), nothing else', async () => {
    await using t = setup({ mode: 'allowlist', allowlist: [{ pattern: 'git status *', cwd: '/work/a' }, { pattern: 'make', cwd: '/link' }] });
    expect((await t.call({ command: 'git status', cwd: '/work/a/sub' })).result.ok).toBe(true);
    expect(errorOf(await t.call({ command: 'git status', cwd: '/work/b' })).code).toBe('denied');
    expect(errorOf(await t.call({ command: 'git status', cwd: '/work/a/../b' })).code).toBe('denied');
    expect(errorOf(await t.call({ command: 'git status' })).code).toBe('denied');
    // The scope is compared as a real path too: /link is /real.
    expect((await t.call({ command: 'make', cwd: '/real/x' })).result.ok).toBe(true);
    expect(t.ran).toHaveLength(2);
  });

  it('a cwd that resolves through a symlink out of the scope is not covered', async () => {
    await using t = setup({ mode: 'allowlist', allowlist: [{ pattern: 'git status', cwd: '/work' }] });
    expect((await t.call({ command: 'git status', cwd: '/work/in' })).result.ok).toBe(true);
    expect(errorOf(await t.call({ command: 'git status', cwd: '/work/out' })).code).toBe('denied');
  });

  it('an entry without cwd covers no call that gives a cwd', async () => {
    await using t = setup({ mode: 'allowlist', allowlist: ['git status *'] });
    expect((await t.call({ command: 'git status' })).result.ok).toBe(true);
    expect(errorOf(await t.call({ command: 'git status', cwd: '/home/me' })).code).toBe('denied');
  });

  it('without a cwd resolver no call that gives a cwd is covered', async () => {
    await using t = setup({ mode: 'allowlist', allowlist: [{ pattern: 'git status', cwd: '/work' }] }, { noCwdResolver: true });
    expect(errorOf(await t.call({ command: 'git status', cwd: '/work' })).code).toBe('denied');
  });

  it("'allow always' records the real cwd as the scope and the exact env", async () => {
    await using t = setup();
    const asked = answerWith(t.broker, 'allow-always');
    expect((await t.call({ command: ['make', 'test'], cwd: '/link/repo', env: { CI: '1' } })).result.ok).toBe(true);
    expect((await t.store.get()).allowlist).toEqual([{ pattern: 'make test', cwd: '/real/repo', env: { CI: '1' } }]);
    expect((await t.call({ command: ['make', 'test'], cwd: '/real/repo/sub', env: { CI: '1' } })).result.ok).toBe(true);
    expect(asked).toHaveLength(1);
    await t.call({ command: ['make', 'test'], cwd: '/other', env: { CI: '1' } });
    await t.call({ command: ['make', 'test'], cwd: '/real/repo', env: { CI: '2' } });
    expect(asked).toHaveLength(3);
  });

  it('a call that sets env is not covered by a pattern that recorded no env', async () => {
    await using t = setup({ mode: 'allowlist', allowlist: ['git status *'] });
    expect(errorOf(await t.call({ command: 'git status', env: { COLOR: '1' } })).code).toBe('denied');
  });

  it("code-loading variables: 'ask' asks despite a covering pattern, 'allowlist' refuses naming the keys, 'full' asks", async () => {
    const env = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: 'sh -c id', COLOR: '1' };
    await using ask = setup({ mode: 'ask', allowlist: ['git status *'] });
    const asked = answerWith(ask.broker, 'deny');
    expect(errorOf(await ask.call({ command: 'git status', env })).code).toBe('denied');
    expect(asked[0]).toMatchObject({ summary: expect.stringContaining('GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0'), env });
    await using list = setup({ mode: 'allowlist', allowlist: ['git status *'] });
    const refused = errorOf(await list.call({ command: 'git status', env }));
    expect(refused.code).toBe('denied');
    expect(refused.message).toMatch(/env sets GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0, which can make programs run other code/);
    await using full = setup({ mode: 'full' });
    const fullAsked = answerWith(full.broker, 'allow-once');
    expect((await full.call({ command: 'git status', env: { LD_PRELOAD: '/tmp/x.so' } })).result.ok).toBe(true);
    expect((await full.call({ command: 'git status', env: { COLOR: '1' } })).result.ok).toBe(true);
    expect(fullAsked).toHaveLength(1);
    expect(ask.ran.length + list.ran.length).toBe(0);
  });

  it("an approval answered after the mode became 'deny' runs nothing", async () => {
    await using t = setup();
    const pending = t.call({ command: 'git push' });
    for (let i = 0; i < 200 && t.broker.list().length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    await t.store.set({ mode: 'deny', allowlist: [] });
    t.broker.resolve(t.broker.list()[0]!.id, 'allow-always');
    const outcome = await pending;
    expect(errorOf(outcome)).toMatchObject({ code: 'denied', message: expect.stringMatching(/switched to mode 'deny' while its approval was pending/) });
    expect(await t.store.get()).toEqual({ mode: 'deny', allowlist: [] });
    expect(t.ran).toHaveLength(0);
  });
});

describe('describeExecArgs and isExecGated', () => {
  it('reads argv, command lines and shell lines', () => {
    expect(describeExecArgs({ command: ['a', 'b c'], cwd: '/x' })).toEqual({ target: { argv: ['a', 'b c'] }, commandLine: 'a "b c"', cwd: '/x' });
    expect(describeExecArgs({ command: 'a "b c"' })).toEqual({ target: { argv: ['a', 'b c'] }, commandLine: 'a "b c"' });
    expect(describeExecArgs({ command: 'a | b', shell: true })).toEqual({ target: { argv: [], shell: true }, commandLine: 'a | b' });
    expect(describeExecArgs({ command: 'a', env: { K: 'v' }, timeoutMs: 10 })).toEqual({ target: { argv: ['a'] }, commandLine: 'a', env: { K: 'v' }, timeoutMs: 10 });
    expect(describeExecArgs({ command: 'a', env: {} })).toEqual({ target: { argv: ['a'] }, commandLine: 'a' });
    expect(() => describeExecArgs({ command: 'a', env: { K: 1 } })).toThrow(/env must be an object of string values/);
    expect(() => describeExecArgs({ command: 'a', env: { 'A=B': '1' } })).toThrow(/invalid variable name 'A=B'/);
    expect(() => describeExecArgs({ command: 'a', env: { A: 'x\0y' } })).toThrow(/env value of A contains a NUL character/);
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
