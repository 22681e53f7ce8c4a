import { mkdir, mkdtemp, readFile, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalDecision } from '../approvalBroker.js';
import type { ExecApprovalPolicy } from '../execPolicy.js';
import type { InvocationOutcome } from '../pipeline.js';
import type { SystemRunResult } from './systemRun.js';
import { createExecInvoker } from '../../../../tests/support/execInvoker.js';

const posix = process.platform !== 'win32';
const node = process.execPath;
let tmp: string;

beforeAll(async () => {
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'capnode-prepare-')));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function setup(policy: Partial<ExecApprovalPolicy>, answer?: ApprovalDecision) {
  const exec = createExecInvoker(policy, answer);
  const call = (command: string, args: Record<string, unknown>) => exec.invoker.invoke({ command, args, transport: 'gateway', caller: 'gateway test' });
  return { ...exec, call };
}

function ok(outcome: InvocationOutcome): Record<string, any> {
  if (!outcome.result.ok) throw new Error(`expected success, got ${outcome.result.error.code}: ${outcome.result.error.message}`);
  return outcome.result.structured as Record<string, any>;
}

function failure(outcome: InvocationOutcome) {
  if (outcome.result.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.result.structured)}`);
  return outcome.result.error;
}

/** The params OpenClaw's agent sends to `system.run.prepare` (bash-tools exec host=node). */
function agentPrepare(argv: string[], extra: Record<string, unknown> = {}) {
  return { command: argv, security: 'allowlist', ask: 'on-miss', rawCommand: argv.join(' '), agentId: 'main', sessionKey: 'agent:main:main', ...extra };
}

describe('system.run.prepare', () => {
  it('returns the plan with the real cwd, the command text and this machine\'s policy, without running or asking', async () => {
    await using ctx = setup({ mode: 'ask' });
    const real = path.join(tmp, 'real');
    await mkdir(real, { recursive: true });
    const link = path.join(tmp, 'link');
    await symlink(real, link).catch(() => {});
    const marker = path.join(tmp, 'prepared-marker');
    const argv = [node, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`];
    const prepared = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: link, rawCommand: 'node -e …' })));
    expect(prepared).toEqual({
      plan: { argv, cwd: real, commandText: expect.stringContaining(node), commandPreview: 'node -e …', agentId: 'main', sessionKey: 'agent:main:main' },
      execPolicy: { security: 'allowlist', ask: 'on-miss' },
      allowAlwaysCoverage: { complete: false, patterns: [] },
    });
    expect(ctx.asked).toHaveLength(0);
    await expect(readFile(marker)).rejects.toThrow();
  });

  it.each([
    ['deny', { security: 'deny', ask: 'off' }],
    ['allowlist', { security: 'allowlist', ask: 'off' }],
    ['full', { security: 'full', ask: 'off' }],
  ] as const)('reports mode %s as %o', async (mode, execPolicy) => {
    await using ctx = setup({ mode });
    expect(ok(await ctx.call('system.run.prepare', agentPrepare(['true']))).execPolicy).toEqual(execPolicy);
  });

  it('keeps a call without cwd without one and refuses a missing cwd, a bad env or an empty argv', async () => {
    await using ctx = setup({ mode: 'full' });
    expect(ok(await ctx.call('system.run.prepare', agentPrepare(['true']))).plan).not.toHaveProperty('cwd');
    expect(failure(await ctx.call('system.run.prepare', agentPrepare(['true'], { cwd: path.join(tmp, 'missing') }))).code).toBe('invalid_arguments');
    expect(failure(await ctx.call('system.run.prepare', agentPrepare(['true'], { env: { 'A=B': 'x' } }))).code).toBe('invalid_arguments');
    expect(failure(await ctx.call('system.run.prepare', agentPrepare([''])))).toMatchObject({ code: 'invalid_arguments' });
    expect(failure(await ctx.call('system.run.prepare', { command: [], security: 'full', ask: 'off' })).code).toBe('invalid_arguments');
  });
});

describe('system.run with a prepared plan', () => {
  it('runs exactly the plan\'s argv in its cwd and reports success', async () => {
    await using ctx = setup({ mode: 'full' });
    const argv = [node, '-e', 'console.log(process.cwd()); process.exit(Number(process.argv[1] ?? 0))'];
    const prepared = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: tmp })));
    // What OpenClaw's agent sends (buildNodeSystemRunInvoke), plus the gateway's runId.
    const run = ok(
      await ctx.call('system.run', {
        command: prepared.plan.argv,
        rawCommand: prepared.plan.commandText,
        systemRunPlan: prepared.plan,
        cwd: prepared.plan.cwd,
        timeoutMs: 30_000,
        agentId: 'main',
        sessionKey: 'agent:main:main',
        runId: 'run-1',
      }),
    ) as SystemRunResult;
    expect(run).toMatchObject({ exitCode: 0, success: true, cwd: tmp, stdout: `${tmp}\n` });

    const failing = ok(await ctx.call('system.run', { command: [node, '-e', 'process.exit(3)'], timeoutMs: null })) as SystemRunResult;
    expect(failing).toMatchObject({ exitCode: 3, success: false, timedOut: false });
  });

  it.skipIf(!posix)('a timeout or a signal is not success; a huge timeoutMs is capped, not refused', async () => {
    await using ctx = setup({ mode: 'full' });
    const slept = ok(await ctx.call('system.run', { command: ['sleep', '5'], timeoutMs: 200 })) as SystemRunResult;
    expect(slept).toMatchObject({ timedOut: true, success: false });
    const capped = ok(await ctx.call('system.run', { command: ['true'], timeoutMs: 2_147_483_647 })) as SystemRunResult;
    expect(capped.success).toBe(true);
  });

  it('refuses a command or cwd that differs from the plan, before anything runs or anyone is asked', async () => {
    await using ctx = setup({ mode: 'ask' }, 'allow-once');
    const marker = path.join(tmp, 'mismatch-marker');
    const argv = [node, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`];
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: tmp })));
    const swapped = failure(await ctx.call('system.run', { command: [node, '-e', 'console.log(1)'], systemRunPlan: plan }));
    expect(swapped).toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('systemRunPlan.argv') });
    const moved = failure(await ctx.call('system.run', { command: plan.argv, systemRunPlan: plan, cwd: os.homedir() }));
    expect(moved).toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('systemRunPlan.cwd') });
    const shelled = failure(await ctx.call('system.run', { command: 'echo hi', shell: true, systemRunPlan: plan }));
    expect(shelled.code).toBe('invalid_arguments');
    expect(failure(await ctx.call('system.run', { command: plan.argv, systemRunPlan: { ...plan, argv: [] } })).code).toBe('invalid_arguments');
    expect(ctx.asked).toHaveLength(0);
    await expect(readFile(marker)).rejects.toThrow();
  });

  it('refuses a cwd beside a plan that has none', async () => {
    await using ctx = setup({ mode: 'full' });
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(['true'])));
    expect(plan).not.toHaveProperty('cwd');
    const moved = failure(await ctx.call('system.run', { command: plan.argv, systemRunPlan: plan, cwd: tmp }));
    expect(moved).toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('systemRunPlan.cwd') });
  });

  it('env given to system.run but not to prepare is approved on its own: an approval of the plan without it does not cover it', async () => {
    await using ctx = setup({ mode: 'ask' }, 'allow-always');
    const marker = path.join(tmp, 'env-marker');
    const argv = [node, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, process.env.NODE_OPTIONS ?? '')`];
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: tmp })));
    expect(ok(await ctx.call('system.run', { command: plan.argv, systemRunPlan: plan, cwd: plan.cwd })).success).toBe(true);
    const { allowlist } = (await ctx.store.get()) as ExecApprovalPolicy;
    expect(allowlist).toHaveLength(1);
    await rm(marker, { force: true });
    // The same plan with a code-loading variable added only at run time.
    const env = { NODE_OPTIONS: `--require=${path.join(tmp, 'evil.js')}` };
    await ctx.store.set({ mode: 'allowlist', allowlist });
    const refused = failure(await ctx.call('system.run', { command: plan.argv, systemRunPlan: plan, cwd: plan.cwd, env }));
    expect(refused.code).toBe('denied');
    await expect(readFile(marker)).rejects.toThrow();
    // Asked (mode ask), the approval request names the variable the plan never had.
    await ctx.store.set({ mode: 'ask', allowlist });
    await ctx.call('system.run', { command: plan.argv, systemRunPlan: plan, cwd: plan.cwd, env: { ...env, NODE_OPTIONS: '' } });
    expect(ctx.asked).toHaveLength(2);
    expect(ctx.asked[1]).toMatchObject({ argv, cwd: tmp, env: { NODE_OPTIONS: '' } });
  });

  it.skipIf(!posix)('a plan whose cwd is a symlink runs at, and is approved for, its real path: one out of an approved scope is not covered', async () => {
    await using ctx = setup({ mode: 'ask' }, 'allow-always');
    const scope = path.join(tmp, 'scope');
    const outside = path.join(tmp, 'outside');
    await mkdir(scope, { recursive: true });
    await mkdir(outside, { recursive: true });
    const inward = path.join(tmp, 'to-scope');
    const escape = path.join(scope, 'escape');
    await symlink(scope, inward).catch(() => {});
    await symlink(outside, escape).catch(() => {});
    const argv = [node, '-e', 'console.log(process.cwd())'];
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: scope })));
    // A plan the gateway altered to name the scope through a symlink: the real path is what is asked and where it runs.
    const linked = { ...plan, cwd: inward };
    const ran = ok(await ctx.call('system.run', { command: argv, systemRunPlan: linked, cwd: inward })) as SystemRunResult;
    expect(ran).toMatchObject({ success: true, cwd: scope, stdout: `${scope}\n` });
    expect(ctx.asked[0]).toMatchObject({ cwd: scope });
    const { allowlist } = (await ctx.store.get()) as ExecApprovalPolicy;
    expect(allowlist).toEqual([expect.objectContaining({ cwd: scope })]);
    // A plan whose cwd lies inside the scope by name but resolves outside it is not covered.
    await ctx.store.set({ mode: 'allowlist', allowlist });
    const escaped = failure(await ctx.call('system.run', { command: argv, systemRunPlan: { ...plan, cwd: escape }, cwd: escape }));
    expect(escaped.code).toBe('denied');
    expect(ok(await ctx.call('system.run', { command: argv, systemRunPlan: plan, cwd: plan.cwd })).success).toBe(true);
  });

  it("the user is shown the plan's argv, never a commandText, commandPreview or rawCommand the gateway put beside it", async () => {
    await using ctx = setup({ mode: 'ask' }, 'deny');
    const marker = path.join(tmp, 'preview-marker');
    const argv = [node, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`];
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: tmp })));
    const forged = { ...plan, commandText: 'ls', commandPreview: 'ls' };
    expect(failure(await ctx.call('system.run', { command: argv, rawCommand: 'ls', systemRunPlan: forged, cwd: tmp })).code).toBe('denied');
    expect(ctx.asked).toHaveLength(1);
    expect(ctx.asked[0]).toMatchObject({ argv, commandLine: plan.commandText });
    expect(ctx.asked[0]!.commandLine).not.toBe('ls');
    await expect(readFile(marker)).rejects.toThrow();
  });

  it('the gateway\'s approved / approvalDecision never replace this machine\'s approval, nor record an allowlist entry', async () => {
    await using ctx = setup({ mode: 'ask' }, 'deny');
    const marker = path.join(tmp, 'approved-marker');
    const argv = [node, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`];
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(argv, { cwd: tmp })));
    const params = { command: plan.argv, systemRunPlan: plan, cwd: plan.cwd, runId: 'approval-1', approved: true, approvalDecision: 'allow-always' };
    expect(failure(await ctx.call('system.run', params)).code).toBe('denied');
    expect(ctx.asked).toHaveLength(1);
    expect(ctx.asked[0]).toMatchObject({ command: 'system.run', argv, cwd: tmp });
    await expect(readFile(marker)).rejects.toThrow();
    expect((await ctx.store.get()) as ExecApprovalPolicy).toMatchObject({ mode: 'ask', allowlist: [] });
  });

  it('an allowlist-mode policy refuses an unlisted plan whatever the gateway approved', async () => {
    await using ctx = setup({ mode: 'allowlist' });
    const { plan } = ok(await ctx.call('system.run.prepare', agentPrepare(['/bin/sh', '-lc', 'echo hi'])));
    const refused = failure(await ctx.call('system.run', { command: plan.argv, systemRunPlan: plan, cwd: plan.cwd, approved: true, approvalDecision: 'allow-once', runId: 'r' }));
    expect(refused.code).toBe('denied');
  });
});
