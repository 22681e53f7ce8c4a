/**
 * "What runs is what was approved", attacked over real sockets: a real host (createHost, temp config
 * directory, 127.0.0.1 port 0) called by the real MCP SDK v2 client over HTTP. Every attack writes a
 * marker file when it succeeds; each class also has a control that shows the same attack does write
 * the marker once the user approves it, so an absent marker means the policy stopped it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestHost, tempDir, type TestHost } from '../support/testHost.js';
import { eventually } from '../support/poll.js';

const posix = process.platform !== 'win32';

/** A git repository with one untracked file, and a hook script that writes `marker` when run. */
function makeRepo(root: string, name: string, marker: string): { repo: string; hook: string } {
  const repo = join(root, name);
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, 'file.txt'), 'x');
  const hook = join(root, `${name}-hook.sh`);
  writeFileSync(hook, `#!/bin/sh\necho ran >> '${marker}'\n`);
  chmodSync(hook, 0o755);
  return { repo, hook };
}

async function withHost(execApprovals: Record<string, unknown>, run: (t: TestHost) => Promise<void>): Promise<void> {
  await using t = await startTestHost({ settings: { execApprovals } });
  await run(t);
}

describe.runIf(posix)('exec policy over MCP HTTP: env-borne code', () => {
  const fsmonitorEnv = (hook: string) => ({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: hook });

  it("mode 'allowlist': git status with GIT_CONFIG_* is refused naming the keys, and runs nothing", async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    const { repo, hook } = makeRepo(dir.path, 'repo', marker);
    await withHost({ mode: 'allowlist', allowlist: [{ pattern: 'git status *', cwd: repo }] }, async (t) => {
      // The entry covers the plain call...
      const plain = await t.call('system.run', { command: ['git', 'status', '--short'], cwd: repo });
      expect(plain.isError, plain.text).toBe(false);
      // ...but not one that smuggles configuration through the environment.
      const attack = await t.call('system.run', { command: ['git', 'status'], cwd: repo, env: fsmonitorEnv(hook) });
      expect(attack.isError).toBe(true);
      expect(attack.text).toMatch(/env sets GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0, which can make programs run other code/);
      for (const env of [{ GIT_EXTERNAL_DIFF: hook }, { GIT_PAGER: hook }, { PAGER: hook }, { PATH: dir.path }, { LD_PRELOAD: join(dir.path, 'x.so') }, { BASH_FUNC_git: '() { touch x; }' }]) {
        const refused = await t.call('system.run', { command: ['git', 'status'], cwd: repo, env });
        expect(refused.isError, JSON.stringify(env)).toBe(true);
        expect(refused.text).toContain(`env sets ${Object.keys(env)[0]}`);
      }
      expect(t.asked).toEqual([]);
    });
    expect(existsSync(marker)).toBe(false);
  });

  it("mode 'ask': a covering pattern does not cover code-loading env; the prompt shows every key and value", async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    const { repo, hook } = makeRepo(dir.path, 'repo', marker);
    await withHost({ mode: 'ask', allowlist: [{ pattern: 'git status *', cwd: repo }] }, async (t) => {
      t.answerWith('deny');
      const attack = await t.call('system.run', { command: ['git', 'status'], cwd: repo, env: fsmonitorEnv(hook) });
      expect(attack.isError).toBe(true);
      expect(attack.text).toMatch(/was denied by the user/);
      expect(t.asked).toHaveLength(1);
      expect(t.asked[0]).toMatchObject({ cwd: repo, resolvedPath: expect.stringMatching(/\/git$/), env: fsmonitorEnv(hook), summary: expect.stringContaining('GIT_CONFIG_VALUE_0') });
      expect(existsSync(marker)).toBe(false);
      // Control: approving that exact value runs it, and the hook really writes the marker.
      t.answerWith('allow-once');
      const approved = await t.call('system.run', { command: ['git', 'status'], cwd: repo, env: fsmonitorEnv(hook) });
      expect(approved.isError, approved.text).toBe(false);
      expect(existsSync(marker)).toBe(true);
    });
  });

  it("mode 'full' still asks for code-loading env", async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    const { repo, hook } = makeRepo(dir.path, 'repo', marker);
    await withHost({ mode: 'full' }, async (t) => {
      t.answerWith('deny');
      expect((await t.call('system.run', { command: ['git', 'status'], cwd: repo, env: fsmonitorEnv(hook) })).isError).toBe(true);
      expect(t.asked).toHaveLength(1);
      expect((await t.call('system.run', { command: ['git', 'status'], cwd: repo, env: { COLOR: '1' } })).isError).toBe(false);
      expect(t.asked).toHaveLength(1);
    });
    expect(existsSync(marker)).toBe(false);
  });
});

describe.runIf(posix)('exec policy over MCP HTTP: cwd-borne configuration', () => {
  it('an entry scoped to one directory does not run git where .git/config sets core.fsmonitor', async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    const safe = makeRepo(dir.path, 'safe', marker).repo;
    const { repo: evil, hook } = makeRepo(dir.path, 'evil', marker);
    execFileSync('git', ['-C', evil, 'config', 'core.fsmonitor', hook]);
    symlinkSync(evil, join(safe, 'link-to-evil'));
    await withHost({ mode: 'allowlist', allowlist: [{ pattern: 'git status *', cwd: safe }] }, async (t) => {
      expect((await t.call('system.run', { command: ['git', 'status'], cwd: safe })).isError).toBe(false);
      for (const cwd of [evil, join(safe, 'link-to-evil'), join(safe, '..', 'evil'), `${safe}/../evil`]) {
        const refused = await t.call('system.run', { command: ['git', 'status'], cwd });
        expect(refused.isError, cwd).toBe(true);
        expect(refused.text).toMatch(/no exec allowlist entry covers it/);
      }
      // An entry without cwd covers only calls without cwd.
      expect((await t.call('system.execApprovals.get', {})).structured).toMatchObject({ mode: 'allowlist' });
    });
    expect(existsSync(marker)).toBe(false);
    // Control: the same call in mode full runs the repository's hook.
    await withHost({ mode: 'full' }, async (t) => {
      expect((await t.call('system.run', { command: ['git', 'status'], cwd: evil })).isError).toBe(false);
    });
    expect(existsSync(marker)).toBe(true);
  });

  it("an entry without cwd never covers a call with a cwd; 'allow always' records the real cwd as the scope", async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    const { repo } = makeRepo(dir.path, 'repo', marker);
    symlinkSync(repo, join(dir.path, 'repo-link'));
    await withHost({ mode: 'allowlist', allowlist: ['git status *'] }, async (t) => {
      expect((await t.call('system.run', { command: ['git', 'status'], cwd: repo })).isError).toBe(true);
    });
    await withHost({ mode: 'ask' }, async (t) => {
      t.answerWith('allow-always');
      expect((await t.call('system.run', { command: ['git', 'status', '--short'], cwd: join(dir.path, 'repo-link') })).isError).toBe(false);
      const settings = JSON.parse(readFileSync(join(t.home, 'settings.json'), 'utf8')) as { execApprovals: { allowlist: unknown[] } };
      expect(settings.execApprovals.allowlist).toEqual([{ pattern: 'git status --short', cwd: repo }]);
      t.answerWith(undefined);
      expect((await t.call('system.run', { command: ['git', 'status', '--short'], cwd: join(repo, '.git') })).isError).toBe(false);
      expect(t.asked).toHaveLength(1);
    });
  });
});

describe.runIf(posix)('exec policy over MCP HTTP: glob over-match, argv versus string, shell forms', () => {
  it("'git status*' covers git status and git status --short, never git statusx or smuggled shell syntax", async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    await withHost({ mode: 'allowlist', allowlist: ['git status*'] }, async (t) => {
      expect((await t.call('system.run', { command: ['git', 'status'] })).isError).toBe(false);
      expect((await t.call('system.run', { command: 'git status --short' })).isError).toBe(false);
      expect((await t.call('system.run', { command: ['git', 'status', '--short'] })).isError).toBe(false);
      const statusx = await t.call('system.run', { command: ['git', 'statusx'] });
      expect(statusx.isError).toBe(true);
      expect(statusx.text).toMatch(/no exec allowlist entry covers it/);
      const asString = await t.call('system.run', { command: `git status; touch ${marker}` });
      expect(asString).toMatchObject({ isError: true, text: expect.stringMatching(/shell syntax \(';'\)/) });
      const asArgument = await t.call('system.run', { command: ['git', `status; touch ${marker}`] });
      expect(asArgument.isError).toBe(true);
      // argv is matched per argument, never as a joined string: one argument "status --short" is not two.
      expect((await t.call('system.run', { command: ['git', 'status --short'] })).isError).toBe(true);
      expect((await t.call('system.run', { command: 'git "status --short"' })).isError).toBe(true);
      const asShell = await t.call('system.run', { command: `git status; touch ${marker}`, shell: true });
      expect(asShell).toMatchObject({ isError: true, text: expect.stringMatching(/shell command lines are never allowlisted/) });
      // A quoted $(…) is one literal argument handed to git, never a command substitution.
      const quoted = await t.call('system.run', { command: `git status "$(touch ${marker})"` });
      expect(quoted.isError, quoted.text).toBe(false);
      const path = await t.call('system.run', { command: ['./git', 'status'], cwd: dir.path });
      expect(path.isError).toBe(true);
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('an allowlist pattern with in-token * or shell syntax is refused with a clear error', async () => {
    await withHost({ mode: 'ask' }, async (t) => {
      const star = await t.call('system.execApprovals.set', { add: ['git st*tus'] });
      expect(star).toMatchObject({ isError: true, text: expect.stringMatching(/'\*' inside the argument 'st\*tus' is not supported/) });
      const shell = await t.call('system.execApprovals.set', { add: ['git status; touch x'] });
      expect(shell).toMatchObject({ isError: true, text: expect.stringMatching(/shell syntax/) });
      expect(t.asked).toEqual([]);
    });
  });

  it('a shell line asks in mode ask, showing shell: true, and never becomes an allowlist entry', async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    await withHost({ mode: 'ask', allowlist: ['sh *'] }, async (t) => {
      t.answerWith('allow-always');
      expect((await t.call('system.run', { command: `touch '${marker}'`, shell: true })).isError).toBe(false);
      expect(t.asked[0]).toMatchObject({ shell: true, commandLine: `touch '${marker}'` });
      expect((await t.call('system.execApprovals.get', {})).structured).toMatchObject({ allowlist: ['sh *'] });
    });
    expect(existsSync(marker)).toBe(true);
  });
});

describe('exec policy over MCP HTTP: the child environment and the approval request', () => {
  it('children start from a minimal environment: a host secret never reaches them', async () => {
    process.env.CAPNODE_TEST_SECRET = 'host-secret-4f1d';
    try {
      await withHost({ mode: 'full' }, async (t) => {
        const result = await t.call('system.run', { command: [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'], env: { GIVEN: 'yes' } });
        expect(result.isError, result.text).toBe(false);
        const env = JSON.parse(String(result.structured?.stdout)) as Record<string, string>;
        expect(env.GIVEN).toBe('yes');
        expect(env.CAPNODE_TEST_SECRET).toBeUndefined();
        expect(JSON.stringify(result)).not.toContain('host-secret-4f1d');
      });
    } finally {
      delete process.env.CAPNODE_TEST_SECRET;
    }
  });

  it('the pending approval carries program, resolved path, argv, real cwd, masked env, timeout, transport and an argument hash', async () => {
    using dir = tempDir();
    await withHost({ mode: 'ask' }, async (t) => {
      const call = t.call('system.run', { command: ['node', '-e', '0'], cwd: dir.path, env: { API_TOKEN: 'tok-123456', COLOR: '1' }, timeoutMs: 9000 });
      call.catch(() => undefined);
      const pending = await eventually(() => t.host.approvals.list()[0], { what: 'the pending approval' });
      expect(pending).toMatchObject({
        command: 'system.run',
        commandLine: 'node -e 0',
        argv: ['node', '-e', '0'],
        resolvedPath: expect.stringMatching(/node(\.exe)?$/),
        cwd: dir.path,
        env: { API_TOKEN: '[masked, 10 characters]', COLOR: '1' },
        timeoutMs: 9000,
        transport: 'mcp-http',
        argsHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      expect(JSON.stringify(t.host.approvals.list())).not.toContain('tok-123456');
      t.host.approvals.resolve(pending.id, 'deny');
      expect((await call).isError).toBe(true);
    });
  });
});

describe('exec policy over MCP HTTP: policy changes', () => {
  it('a policy change approved after a stricter one: the pending "add" keeps mode deny', async () => {
    await withHost({ mode: 'ask' }, async (t) => {
      const change = t.call('system.execApprovals.set', { add: ['git status *'] });
      const pending = await eventually(() => t.host.approvals.list()[0], { what: 'the pending policy change' });
      const stricter = await t.host.invoker.invoke({ command: 'system.execApprovals.set', args: { mode: 'deny' }, transport: 'cli' });
      expect(stricter.result.ok).toBe(true);
      t.host.approvals.resolve(pending.id, 'allow-once');
      expect((await change).structured).toMatchObject({ mode: 'deny', allowlist: ['git status *'] });
      const settings = JSON.parse(readFileSync(join(t.home, 'settings.json'), 'utf8')) as { execApprovals: unknown };
      expect(settings.execApprovals).toEqual({ mode: 'deny', allowlist: ['git status *'] });
      expect((await t.call('system.run', { command: ['git', 'status'] })).text).toMatch(/mode 'deny'/);
    });
  });

  it('a weaker mode approved after a stricter one replaced its starting point is refused', async () => {
    await withHost({ mode: 'ask' }, async (t) => {
      const change = t.call('system.execApprovals.set', { mode: 'full' });
      const pending = await eventually(() => t.host.approvals.list()[0], { what: 'the pending policy change' });
      await t.host.invoker.invoke({ command: 'system.execApprovals.set', args: { mode: 'deny' }, transport: 'cli' });
      t.host.approvals.resolve(pending.id, 'allow-once');
      const outcome = await change;
      expect(outcome).toMatchObject({ isError: true, text: expect.stringMatching(/mode changed while this change waited for approval/) });
      const settings = JSON.parse(readFileSync(join(t.home, 'settings.json'), 'utf8')) as { execApprovals: { mode: string } };
      expect(settings.execApprovals.mode).toBe('deny');
    });
  });

  it('a system.run approved after the mode became deny runs nothing', async () => {
    using dir = tempDir();
    const marker = join(dir.path, 'marker');
    await withHost({ mode: 'ask' }, async (t) => {
      const call = t.call('system.run', { command: ['touch', marker] });
      const pending = await eventually(() => t.host.approvals.list()[0], { what: 'the pending run' });
      await t.host.invoker.invoke({ command: 'system.execApprovals.set', args: { mode: 'deny' }, transport: 'cli' });
      t.host.approvals.resolve(pending.id, 'allow-once');
      expect((await call).text).toMatch(/switched to mode 'deny' while its approval was pending/);
    });
    expect(existsSync(marker)).toBe(false);
    rmSync(marker, { force: true });
  });
});
