// system.run runs the program the user approved: a PATH in the caller's env, or a cwd holding a
// program of the same name, never changes which file runs; a cwd that is a file or missing is refused.
import { chmodSync, mkdirSync, writeFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalBroker, createExecApprovalHook, createInvoker, createMemoryExecApprovalStore, createRegistry } from '@capnode/capabilities';
import { createNodeExecResolvers, createSystemCapability } from '@capnode/capabilities/node';

describe.runIf(process.platform !== 'win32')('system.run program resolution', () => {
  it("a caller's PATH and a same-named program in cwd never replace the approved one", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-res-')));
    try {
      const evil = join(root, 'evil');
      mkdirSync(evil);
      const marker = join(root, 'pwned');
      writeFileSync(join(evil, 'ls'), `#!/bin/sh\ntouch '${marker}'\n`);
      chmodSync(join(evil, 'ls'), 0o755);
      writeFileSync(join(root, 'afile'), 'x');
      const env = { PATH: '/usr/bin:/bin', HOME: root };
      await using broker = createApprovalBroker({ timeoutMs: 60_000, waitMode: 'block' });
      const asked: { resolvedPath?: string | undefined }[] = [];
      broker.subscribe((event) => {
        if (event.type !== 'requested') return;
        asked.push(event.approval);
        queueMicrotask(() => broker.answer(event.approval.id, 'allow-once'));
      });
      const store = createMemoryExecApprovalStore({ mode: 'ask' });
      const invoker = createInvoker({
        registry: createRegistry([createSystemCapability({ env, defaultCwd: root })]),
        hooks: [createExecApprovalHook({ store, broker, ...createNodeExecResolvers({ env, defaultCwd: root }), platform: 'linux' })],
      });
      const run = (args: unknown) => invoker.invoke({ command: 'system.run', args, transport: 'mcp-http', caller: 'agent' });
      const viaPath = await run({ command: ['ls'], env: { PATH: evil } });
      expect(viaPath.result.ok).toBe(true);
      expect(asked.at(-1)!.resolvedPath).toMatch(/^\/(usr\/)?bin\/ls$/);
      const inCwd = await run({ command: ['ls'], cwd: evil });
      expect(inCwd.result.ok).toBe(true);
      expect(asked.at(-1)!.resolvedPath).toMatch(/^\/(usr\/)?bin\/ls$/);
      expect(existsSync(marker)).toBe(false);
      // A cwd that is a file or does not exist is refused before anyone is asked.
      const before = asked.length;
      expect((await run({ command: ['ls'], cwd: join(root, 'afile') })).result).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
      expect((await run({ command: ['ls'], cwd: join(root, 'missing') })).result).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
      expect(asked.length).toBe(before);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
