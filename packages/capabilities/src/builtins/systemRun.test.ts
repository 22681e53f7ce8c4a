import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, symlink } from 'node:fs/promises';
import { createApprovalBroker, type ApprovalDecision } from '../approvalBroker.js';
import type { ProgressUpdate } from '../contract.js';
import { createMemoryExecApprovalStore, type ExecApprovalPolicy } from '../execPolicy.js';
import { findExecutable } from '../internal/which.js';
import { createBuiltinCapabilities } from '../node.js';
import { createInvoker, type InvocationOutcome } from '../pipeline.js';
import { createRegistry } from '../registry.js';
import type { SystemRunResult } from './systemRun.js';
import { createExecInvoker } from '../../../../tests/support/execInvoker.js';
import { eventually, isAlive } from '../../../../tests/support/poll.js';

const posix = process.platform !== 'win32';
const node = process.execPath;
let tmp: string;

beforeAll(async () => {
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'capnode-run-')));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function setup(policy: Partial<ExecApprovalPolicy> = { mode: 'full' }, answer?: ApprovalDecision) {
  const exec = createExecInvoker(policy, answer);
  const run = (args: Record<string, unknown>, options: Parameters<typeof exec.invoker.invoke>[1] = {}) =>
    exec.invoker.invoke({ command: 'system.run', args, transport: 'mcp-http' }, options);
  return { ...exec, run };
}

function structured(outcome: InvocationOutcome): SystemRunResult {
  if (!outcome.result.ok) throw new Error(`expected success, got ${outcome.result.error.code}: ${outcome.result.error.message}`);
  return outcome.result.structured as SystemRunResult;
}

function failure(outcome: InvocationOutcome) {
  if (outcome.result.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.result.structured)}`);
  return outcome.result.error;
}

async function readPid(file: string): Promise<number> {
  await eventually(async () => (await readFile(file, 'utf8').catch(() => '')).trim().length > 0, { timeoutMs: 15_000 });
  return Number((await readFile(file, 'utf8')).trim());
}

describe('system.run', () => {
  it('runs argv without a shell and reports exit code, stdout and stderr separately', async () => {
    await using t = setup();
    const result = structured(await t.run({ command: [node, '-e', 'process.stdout.write("out"); process.stderr.write("err"); process.exit(3)'] }));
    expect(result).toMatchObject({ exitCode: 3, signal: null, stdout: 'out', stderr: 'err', timedOut: false, truncated: { stdout: false, stderr: false } });
    expect(result.pid).toBeGreaterThan(0);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('passes arguments literally: no shell expansion of argv', async () => {
    await using t = setup();
    const result = structured(await t.run({ command: ['echo', '$(id)', '`id`', '*', '$HOME', 'a;b'] }));
    expect(result.stdout).toBe('$(id) `id` * $HOME a;b\n');
    expect(result.command).toBe('echo $(id) `id` * $HOME a;b');
  });

  it('splits a command string with quotes, and refuses shell syntax in it', async () => {
    await using t = setup();
    expect(structured(await t.run({ command: `node -e "console.log('a  b', process.argv.length)"` })).stdout).toBe('a  b 1\n');
    const refused = failure(await t.run({ command: 'echo hi | wc -c' }));
    expect(refused).toMatchObject({ code: 'invalid_arguments', message: expect.stringMatching(/shell syntax \('\|'\).*shell: true/) });
  });

  it.runIf(posix)('runs a command line in the shell with shell: true', async () => {
    await using t = setup();
    const result = structured(await t.run({ command: 'echo hello | tr a-z A-Z; exit 4', shell: true }));
    expect(result).toMatchObject({ stdout: 'HELLO\n', exitCode: 4 });
  });

  it('runs in the given cwd and refuses a missing or non-directory cwd', async () => {
    await using t = setup();
    expect(structured(await t.run({ command: [node, '-e', 'console.log(process.cwd())'], cwd: tmp })).stdout.trim()).toBe(tmp);
    const missing = path.join(tmp, 'missing');
    expect(failure(await t.run({ command: ['echo'], cwd: missing }))).toEqual({ code: 'invalid_arguments', message: `cwd '${missing}' does not exist.` });
    const file = path.join(tmp, 'file.txt');
    await writeFile(file, 'x');
    expect(failure(await t.run({ command: ['echo'], cwd: file }))).toEqual({ code: 'invalid_arguments', message: `cwd '${file}' is not a directory.` });
  });

  it('starts the child from a minimal environment plus the approved env: host secrets never reach it', async () => {
    process.env.CAPNODE_TEST_SECRET = 'host-secret-value';
    try {
      await using t = setup();
      const result = structured(await t.run({ command: [node, '-e', 'console.log(JSON.stringify(process.env))'], env: { CAPNODE_T: 'v 1' } }));
      const env = JSON.parse(result.stdout) as Record<string, string>;
      expect(env.CAPNODE_T).toBe('v 1');
      expect(env.PATH).toBe(process.env.PATH);
      expect(result.stdout).not.toContain('host-secret-value');
      expect(env.CAPNODE_TEST_SECRET).toBeUndefined();
      const allowed = /^(PATH|HOME|USER|LOGNAME|SHELL|LANG|LANGUAGE|TERM|TZ|TMPDIR|LC_.*|CAPNODE_T)$/;
      // Node itself may add a few of its own (e.g. on macOS __CF_USER_TEXT_ENCODING); nothing of the host's beyond the base set.
      for (const key of Object.keys(env)) if (key in process.env) expect(key, key).toMatch(allowed);
    } finally {
      delete process.env.CAPNODE_TEST_SECRET;
    }
  });

  it("code-loading variables need the user's approval of that exact value, even in mode 'full'", async () => {
    const marker = path.join(tmp, 'node-options-marker');
    const preload = path.join(tmp, 'preload.cjs');
    await writeFile(preload, `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`);
    const args = { command: [node, '-e', '0'], env: { NODE_OPTIONS: `--require ${preload}` } };
    await using denied = setup({ mode: 'full' }, 'deny');
    expect(failure(await denied.run(args)).code).toBe('denied');
    expect(denied.asked[0]).toMatchObject({ env: { NODE_OPTIONS: `--require ${preload}` }, summary: expect.stringContaining('NODE_OPTIONS') });
    await expect(readFile(marker, 'utf8')).rejects.toThrow();
    await using refused = setup({ mode: 'allowlist', allowlist: [`${node} *`] });
    expect(failure(await refused.run(args))).toMatchObject({ code: 'denied', message: expect.stringContaining('env sets NODE_OPTIONS') });
    await expect(readFile(marker, 'utf8')).rejects.toThrow();
    await using allowed = setup({ mode: 'full' }, 'allow-once');
    structured(await allowed.run(args));
    expect(await readFile(marker, 'utf8')).toBe('ran');
  });

  it('runs in the real cwd the policy approved, and without cwd in the home directory', async () => {
    const real = path.join(tmp, 'real-dir');
    const link = path.join(tmp, 'link-dir');
    await mkdir(real, { recursive: true });
    await symlink(real, link, 'dir').catch(() => undefined);
    await using t = setup({ mode: 'ask' }, 'allow-once');
    const inLink = structured(await t.run({ command: [node, '-e', 'console.log(process.cwd())'], cwd: link }));
    expect(inLink.stdout.trim()).toBe(real);
    expect(t.asked[0]).toMatchObject({ cwd: real, resolvedPath: node });
    const inHome = structured(await t.run({ command: [node, '-e', 'console.log(process.cwd())'] }));
    expect(inHome.stdout.trim()).toBe(await realpath(os.homedir()));
  });

  it('kills the process when timeoutMs passes and returns what it printed', async () => {
    await using t = setup();
    const pidFile = path.join(tmp, 'timeout.pid');
    const script = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); console.log('started'); setInterval(() => {}, 1000)`;
    const result = structured(await t.run({ command: [node, '-e', script], timeoutMs: 5_000 }));
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL', stdout: 'started\n' });
    const pid = Number(await readFile(pidFile, 'utf8'));
    await eventually(() => !isAlive(pid), { timeoutMs: 15_000 });
  });

  it.runIf(posix)('kills the whole process tree on timeout', async () => {
    await using t = setup();
    const pidFile = path.join(tmp, 'tree.pid');
    const result = structured(await t.run({ command: ['sh', '-c', `sleep 60 & echo $! > '${pidFile}'; wait`], timeoutMs: 3_000 }));
    expect(result.timedOut).toBe(true);
    const grandchild = await readPid(pidFile);
    await eventually(() => !isAlive(grandchild), { timeoutMs: 15_000 });
  });

  it('truncates output over maxOutputBytes with a marker, per stream', async () => {
    await using t = setup();
    const result = structured(
      await t.run({ command: [node, '-e', 'process.stdout.write("a".repeat(5000)); process.stderr.write("b".repeat(10))'], maxOutputBytes: 1000 }),
    );
    expect(result.stdout).toBe(`${'a'.repeat(1000)}\n[output truncated: 4000 bytes omitted]`);
    expect(result.stderr).toBe('b'.repeat(10));
    expect(result.truncated).toEqual({ stdout: true, stderr: false });
  });

  it('does not split a UTF-8 character at the truncation point', async () => {
    await using t = setup();
    const result = structured(await t.run({ command: [node, '-e', 'process.stdout.write("é".repeat(10))'], maxOutputBytes: 5 }));
    expect(result.stdout).toBe('éé\n[output truncated: 15 bytes omitted]');
  });

  it('kills the child when the caller cancels, and reports cancelled', async () => {
    await using t = setup();
    const pidFile = path.join(tmp, 'cancel.pid');
    const controller = new AbortController();
    const script = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
    const pending = t.run({ command: [node, '-e', script] }, { signal: controller.signal });
    const pid = await readPid(pidFile);
    expect(isAlive(pid)).toBe(true);
    controller.abort();
    expect(failure(await pending).code).toBe('cancelled');
    await eventually(() => !isAlive(pid), { timeoutMs: 15_000 });
  });

  it('reports progress while the process runs', async () => {
    await using t = setup();
    const updates: ProgressUpdate[] = [];
    const script = 'let n = 0; const t = setInterval(() => { process.stdout.write("x".repeat(100)); if (++n === 8) { clearInterval(t); } }, 200)';
    const outcome = await t.run({ command: [node, '-e', script] }, { onProgress: (update) => updates.push(update) });
    expect(structured(outcome).stdout).toBe('x'.repeat(800));
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates[0]?.message).toMatch(/^running for .*; \d+ bytes on stdout, 0 on stderr$/);
    for (let i = 1; i < updates.length; i += 1) expect(updates[i]!.progress).toBeGreaterThan(updates[i - 1]!.progress);
  });

  it.runIf(posix)('reports a process ended by a signal', async () => {
    await using t = setup();
    const result = structured(await t.run({ command: ['sh', '-c', 'kill -TERM $$'] }));
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: false });
  });

  it.runIf(posix)('returns when the process exits even if a background child keeps its output open', async () => {
    await using t = setup();
    const pidFile = path.join(tmp, 'bg.pid');
    const outcome = await t.run({ command: ['sh', '-c', `sleep 30 & echo $! > '${pidFile}'; echo done`], timeoutMs: 25_000 });
    const result = structured(outcome);
    expect(result).toMatchObject({ stdout: 'done\n', exitCode: 0, timedOut: false });
    process.kill(await readPid(pidFile), 'SIGKILL');
  });

  it('fails clearly for a program that does not exist', async () => {
    await using t = setup();
    expect(failure(await t.run({ command: ['capnode-no-such-program-xyz'] }))).toEqual({
      code: 'failed',
      message: "Program 'capnode-no-such-program-xyz' was not found on PATH or is not executable.",
    });
    expect(failure(await t.run({ command: ['./nope.sh'] })).message).toBe("Program './nope.sh' was not found or is not executable.");
  });

  it('is annotated destructive and gated by exec approvals', async () => {
    await using t = setup();
    const command = t.invoker.registry.resolve('system.run')!;
    expect(command.definition.annotations).toMatchObject({ destructive: true });
    expect(command.definition.approval).toBe('exec');
    expect(command.inputSchema).toMatchObject({ type: 'object', required: ['command'] });
  });

  it('refuses to run without the exec approval hook on the invoker', async () => {
    await using broker = createApprovalBroker();
    const registry = createRegistry(createBuiltinCapabilities({ execApprovals: { store: createMemoryExecApprovalStore({ mode: 'full' }), broker } }));
    const outcome = await createInvoker({ registry }).invoke({ command: 'system.run', args: { command: ['echo', 'x'] }, transport: 'mcp-http' });
    expect(failure(outcome)).toMatchObject({ code: 'denied', message: expect.stringMatching(/no exec approval hook/) });
  });

  it("runs allowlisted programs in mode 'allowlist' (resolved through PATH) and refuses the rest", async () => {
    const sh = (await findExecutable('sh'))!;
    await using t = setup({ mode: 'allowlist', allowlist: ['echo hello *', `${sh} -c *`] });
    expect(structured(await t.run({ command: 'echo hello world' })).stdout).toBe('hello world\n');
    expect(structured(await t.run({ command: ['sh', '-c', 'echo via-path'] })).stdout).toBe('via-path\n');
    expect(failure(await t.run({ command: 'echo bye' })).code).toBe('denied');
  });

  it("asks in mode 'ask' and runs once allowed", async () => {
    await using t = setup({ mode: 'ask' });
    t.broker.subscribe((event) => {
      if (event.type === 'requested') queueMicrotask(() => t.broker.resolve(event.approval.id, 'allow-always'));
    });
    expect(structured(await t.run({ command: ['echo', 'approved'] })).stdout).toBe('approved\n');
    expect((await t.store.get()).allowlist).toEqual(['echo approved']);
  });

  it("'allow always' for a call with cwd records the real cwd as the scope", async () => {
    await using t = setup({ mode: 'ask' }, 'allow-always');
    structured(await t.run({ command: ['echo', 'scoped'], cwd: tmp }));
    expect((await t.store.get()).allowlist).toEqual([{ pattern: 'echo scoped', cwd: tmp }]);
    structured(await t.run({ command: ['echo', 'scoped'], cwd: tmp }));
    expect(t.asked).toHaveLength(1);
  });
});
