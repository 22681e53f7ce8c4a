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

describe('retry mode: system.run', () => {
  it('an allowed request does not run a retry whose cwd now resolves elsewhere (symlink swapped after the approval)', async () => {
    const { mkdtemp, mkdir, symlink, rm, realpath } = await import('node:fs/promises');
    const os = await import('node:os');
    const path = await import('node:path');
    const { z } = await import('zod');
    const { createExecApprovalHook, defineCapability, defineCommand } = await import('@capnode/capabilities');
    const { resolveWorkingDirectory } = await import('@capnode/capabilities/node');
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'capnode-swap-')));
    try {
      await mkdir(path.join(root, 'app'));
      await mkdir(path.join(root, 'evil'));
      await symlink(path.join(root, 'app'), path.join(root, 'link'));
      const ran: unknown[] = [];
      await using broker = createApprovalBroker({ timeoutMs: 60_000, waitMode: 'return' });
      const store = createMemoryExecApprovalStore({ mode: 'ask' });
      const registry = createRegistry([
        defineCapability({
          category: 'test',
          commands: [defineCommand({ name: 'system.run', description: '', input: z.object({ command: z.array(z.string()), cwd: z.string().optional() }), execute: (args) => (ran.push(args), 'ran') })],
        }),
      ]);
      const hook = createExecApprovalHook({ store, broker, resolveExecutable: (program) => `/usr/bin/${program}`, resolveCwd: (cwd) => resolveWorkingDirectory(cwd, root), platform: 'linux' });
      const invoker = createInvoker({ registry, hooks: [hook] });
      const call = () => invoker.invoke({ command: 'system.run', args: { command: ['make'], cwd: path.join(root, 'link') }, transport: 'mcp-http', caller: 'agent' });
      expect((await call()).result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
      const [pending] = broker.list();
      expect(pending!.cwd).toBe(path.join(root, 'app'));
      expect(broker.answer(pending!.id, 'allow-once', { argsHash: pending!.argsHash! })).toBe('answered');
      await rm(path.join(root, 'link'));
      await symlink(path.join(root, 'evil'), path.join(root, 'link'));
      const retry = await call();
      expect(ran).toEqual([]);
      expect(retry.result).toMatchObject({ ok: false, error: { code: 'approval_pending' } });
      expect(broker.list().at(-1)!.cwd).toBe(path.join(root, 'evil'));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('retry mode through a real host: an answer kept for the retry does not survive a policy change', () => {
  it('allow once, then exec approvals set to deny and back to ask: the retry asks again and nothing runs', async () => {
    const { startTestHost } = await import('../support/testHost.js');
    const { mkdtemp, readFile, rm } = await import('node:fs/promises');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'capnode-revision-'));
    try {
      await using t = await startTestHost({ settings: { approvals: { wait: 'return' } } });
      const marker = path.join(dir, 'ran');
      const run = () => t.call('system.run', { command: ['/bin/sh', '-c', `echo ran >> ${marker}`] });
      const first = await run();
      expect(first.isError).toBe(true);
      expect(first.text).toContain('is waiting for the user');
      const [pending] = t.host.approvals.list();
      expect(t.host.approvals.answer(pending!.id, 'allow-once', { argsHash: pending!.argsHash! })).toBe('answered');
      const setMode = (mode: 'deny' | 'ask') => t.host.settings.update((settings) => ({ ...settings, execApprovals: { ...settings.execApprovals, mode } }));
      await setMode('deny');
      await setMode('ask');
      const retry = await run();
      expect(retry.isError).toBe(true);
      expect(retry.text).toContain('is waiting for the user');
      await expect(readFile(marker, 'utf8')).rejects.toThrow();
      // Control: with no change between the answer and the retry, the retry runs once.
      const [again] = t.host.approvals.list();
      expect(t.host.approvals.answer(again!.id, 'allow-once', { argsHash: again!.argsHash! })).toBe('answered');
      expect((await run()).isError).toBe(false);
      expect(await readFile(marker, 'utf8')).toBe('ran\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
