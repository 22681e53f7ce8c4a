import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalBroker, type ApprovalDecision } from '../approvalBroker.js';
import type { ClientConnection, ClientEvent } from '../contract.js';
import { createExecApprovalHook } from '../execApprovalHook.js';
import { createMemoryExecApprovalStore, type ExecApprovalPolicy } from '../execPolicy.js';
import { createNodeExecResolvers } from '../node.js';
import { createInvoker, type InvocationOutcome } from '../pipeline.js';
import { createRegistry } from '../registry.js';
import { eventually, isAlive } from '../../../../tests/support/poll.js';
import { createShellCapability, type ShellCapabilityOptions } from './shell.js';

const posix = process.platform !== 'win32';
const node = process.execPath;
let tmp: string;

beforeAll(async () => {
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'capnode-shell-')));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function setup(policy: Partial<ExecApprovalPolicy> = { mode: 'full' }, options: ShellCapabilityOptions = {}, answer?: ApprovalDecision) {
  const controller = new AbortController();
  const store = createMemoryExecApprovalStore(policy);
  const broker = createApprovalBroker({ waitMode: 'block' });
  const asked: string[] = [];
  broker.subscribe((event) => {
    if (event.type !== 'requested') return;
    asked.push(event.approval.command);
    if (answer) queueMicrotask(() => broker.resolve(event.approval.id, answer));
  });
  const registry = createRegistry([createShellCapability({ defaultCwd: tmp, ...options, signal: controller.signal })]);
  const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, ...createNodeExecResolvers({ defaultCwd: tmp }) })] });
  const call = (command: string, args: Record<string, unknown>, caller = 'unit', connection?: ClientConnection) =>
    invoker.invoke({ command, args, transport: 'mcp-http', caller, ...(connection ? { connection } : {}) });
  return {
    asked,
    call,
    async [Symbol.asyncDispose]() {
      controller.abort();
      await broker.close();
    },
  };
}

function ok(outcome: InvocationOutcome): Record<string, any> {
  if (!outcome.result.ok) throw new Error(`expected success, got ${outcome.result.error.code}: ${outcome.result.error.message}`);
  return outcome.result.structured as Record<string, any>;
}

function failure(outcome: InvocationOutcome) {
  if (outcome.result.ok) throw new Error('expected a failure');
  return outcome.result.error;
}

async function readUntil(call: ReturnType<typeof setup>['call'], sessionId: string, done: (read: Record<string, any>, stdout: string) => boolean) {
  let stdout = '';
  let cursor = 0;
  return eventually(async () => {
    const read = ok(await call('shell.read', { sessionId, stdoutCursor: cursor, waitMs: 200 }));
    stdout += read.stdout.text;
    cursor = read.stdout.nextCursor;
    return done(read, stdout) ? { read, stdout } : undefined;
  }, { what: 'shell output' });
}

describe('shell sessions', () => {
  it('starts a program that outlives the call, reads stdout and stderr apart, and reports the exit code', async () => {
    await using shell = setup();
    const started = ok(await shell.call('shell.start', { command: [node, '-e', 'console.log("out"); console.error("err"); setTimeout(() => process.exit(3), 300)'] }));
    expect(started).toMatchObject({ status: 'running', exitCode: null, cwd: tmp });
    expect(started.sessionId).toMatch(/^sh-[0-9a-f]{12}$/);
    const { read } = await readUntil(shell.call, started.sessionId, (read) => read.status !== 'running');
    expect(read).toMatchObject({ status: 'exited', exitCode: 3, signal: null });
    const all = ok(await shell.call('shell.read', { sessionId: started.sessionId }));
    expect(all.stdout).toMatchObject({ text: 'out\n', nextCursor: 4, totalBytes: 4, truncated: false });
    expect(all.stderr).toMatchObject({ text: 'err\n', nextCursor: 4 });
    expect(ok(await shell.call('shell.list', {})).sessions).toEqual([expect.objectContaining({ sessionId: started.sessionId, status: 'exited', exitCode: 3, stdoutBytes: 4, stderrBytes: 4 })]);
  });

  it('writes stdin, closes it with eof, and the program sees the end of its input', async () => {
    await using shell = setup();
    const script = 'process.stdin.setEncoding("utf8"); let all = ""; process.stdin.on("data", (d) => { all += d; process.stdout.write("got:" + d); }); process.stdin.on("end", () => { console.log("end:" + all.length); });';
    const { sessionId } = ok(await shell.call('shell.start', { command: [node, '-e', script] }));
    expect(ok(await shell.call('shell.write', { sessionId, data: 'hello\n' }))).toMatchObject({ bytes: 6, stdinOpen: true });
    await readUntil(shell.call, sessionId, (_read, stdout) => stdout.includes('got:hello'));
    expect(ok(await shell.call('shell.write', { sessionId, data: 'bye', eof: true }))).toMatchObject({ bytes: 3, stdinOpen: false });
    const { stdout } = await readUntil(shell.call, sessionId, (read) => read.status === 'exited');
    expect(stdout).toContain('end:9');
    const closed = failure(await shell.call('shell.write', { sessionId, data: 'more' }));
    expect(closed.code).toBe('failed');
    expect(closed.message).toMatch(/ended|closed/);
  });

  it.runIf(posix)('kills the whole process group: a child of the child that ignores SIGTERM dies by SIGKILL after the grace', async () => {
    await using shell = setup();
    const child = `require("node:child_process").spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); console.log(process.pid); setInterval(() => {}, 1000)"], { stdio: "inherit" }); setInterval(() => {}, 1000);`;
    const { sessionId, pid } = ok(await shell.call('shell.start', { command: [node, '-e', child] }));
    const { stdout } = await readUntil(shell.call, sessionId, (_read, text) => /\d+\n/.test(text));
    const grandchild = Number(stdout.trim());
    expect(isAlive(grandchild)).toBe(true);
    const killed = ok(await shell.call('shell.kill', { sessionId, graceMs: 200 }));
    expect(killed).toMatchObject({ status: 'killed', wasRunning: true, pid });
    expect(killed.signal === 'SIGTERM' || killed.signal === 'SIGKILL').toBe(true);
    await eventually(() => !isAlive(grandchild) && !isAlive(pid), { what: 'the process group to die' });
    // Killing again answers how it ended.
    expect(ok(await shell.call('shell.kill', { sessionId }))).toMatchObject({ status: 'killed', wasRunning: false });
  });

  it('runs a shell line with shell: true when the policy allows it', async () => {
    await using shell = setup();
    const { sessionId } = ok(await shell.call('shell.start', { command: 'echo one; echo two >&2; exit 7', shell: true }));
    const { read } = await readUntil(shell.call, sessionId, (read) => read.status !== 'running');
    expect(read.exitCode).toBe(7);
    const all = ok(await shell.call('shell.read', { sessionId }));
    expect([all.stdout.text, all.stderr.text]).toEqual(['one\n', 'two\n']);
  });

  it('keeps only maxOutputBytes per stream and reports what was dropped', async () => {
    await using shell = setup({ mode: 'full' }, { maxOutputBytes: 1024 });
    const { sessionId } = ok(await shell.call('shell.start', { command: [node, '-e', 'process.stdout.write("a".repeat(3000) + "b".repeat(1000))'] }));
    await readUntil(shell.call, sessionId, (read) => read.status === 'exited');
    const read = ok(await shell.call('shell.read', { sessionId }));
    expect(read.stdout).toMatchObject({ cursor: 2976, droppedBytes: 2976, totalBytes: 4000, nextCursor: 4000, truncated: false });
    expect(read.stdout.text).toBe('a'.repeat(24) + 'b'.repeat(1000));
  });

  it('cuts a read at maxBytes: an exact prefix with truncated: true, the rest from nextCursor', async () => {
    await using shell = setup();
    const text = '0123456789'.repeat(10);
    const { sessionId } = ok(await shell.call('shell.start', { command: [node, '-e', `process.stdout.write(${JSON.stringify(text)})`] }));
    await readUntil(shell.call, sessionId, (read) => read.status === 'exited');
    const first = ok(await shell.call('shell.read', { sessionId, maxBytes: 16 }));
    expect(first.stdout).toMatchObject({ text: text.slice(0, 16), truncated: true, nextCursor: 16 });
    expect(first.truncated).toBe(true);
    const rest = ok(await shell.call('shell.read', { sessionId, stdoutCursor: 16, maxBytes: 1024 }));
    expect(rest.stdout).toMatchObject({ text: text.slice(16), truncated: false });
  });

  it('limits running sessions per caller (busy), counting each caller apart', async () => {
    await using shell = setup({ mode: 'full' }, { maxSessionsPerCaller: 2 });
    const sleeper = { command: [node, '-e', 'setInterval(() => {}, 1000)'] };
    const first = ok(await shell.call('shell.start', sleeper));
    ok(await shell.call('shell.start', sleeper));
    const refused = failure(await shell.call('shell.start', sleeper));
    expect(refused.code).toBe('busy');
    expect(refused.message).toMatch(/limit is 2/);
    ok(await shell.call('shell.start', sleeper, 'another caller'));
    ok(await shell.call('shell.kill', { sessionId: first.sessionId, graceMs: 0 }));
    ok(await shell.call('shell.start', sleeper));
  });

  it('answers unknown sessions and out-of-range cursors with invalid_arguments', async () => {
    await using shell = setup();
    for (const command of ['shell.read', 'shell.write', 'shell.kill']) {
      const unknown = failure(await shell.call(command, { sessionId: 'sh-000000000000' }));
      expect(unknown.code, command).toBe('invalid_arguments');
      expect(unknown.message).toContain("No shell session 'sh-000000000000'");
    }
    const { sessionId } = ok(await shell.call('shell.start', { command: [node, '-e', 'process.stdout.write("abc")'] }));
    await readUntil(shell.call, sessionId, (read) => read.status === 'exited');
    const beyond = failure(await shell.call('shell.read', { sessionId, stdoutCursor: 4 }));
    expect(beyond.code).toBe('invalid_arguments');
    expect(beyond.message).toMatch(/beyond the 3 bytes/);
    expect(failure(await shell.call('shell.read', { sessionId, stdoutCursor: -1 })).code).toBe('invalid_arguments');
    expect(failure(await shell.call('shell.start', { command: [] })).code).toBe('invalid_arguments');
  });

  it('is decided by the exec policy: deny refuses, ask asks once for the session and not for read, write or kill', async () => {
    {
      await using denied = setup({ mode: 'deny' });
      const refused = failure(await denied.call('shell.start', { command: [node, '-e', '1'] }));
      expect(refused.code).toBe('denied');
      expect(ok(await denied.call('shell.list', {})).sessions).toEqual([]);
    }
    {
      await using refusedByUser = setup({ mode: 'ask' }, {}, 'deny');
      expect(failure(await refusedByUser.call('shell.start', { command: [node, '-e', '1'] })).code).toBe('denied');
      expect(refusedByUser.asked).toEqual(['shell.start']);
    }
    await using asking = setup({ mode: 'ask' }, {}, 'allow-once');
    const { sessionId } = ok(await asking.call('shell.start', { command: [node, '-e', 'process.stdin.pipe(process.stdout)'] }));
    ok(await asking.call('shell.write', { sessionId, data: 'ping', eof: true }));
    await readUntil(asking.call, sessionId, (read) => read.status === 'exited');
    ok(await asking.call('shell.kill', { sessionId }));
    expect(asking.asked).toEqual(['shell.start']);
  });

  it('refuses to start without an exec approval hook (fails closed)', async () => {
    const invoker = createInvoker({ registry: createRegistry([createShellCapability()]) });
    const outcome = await invoker.invoke({ command: 'shell.start', args: { command: [node, '-e', '1'] }, transport: 'internal' });
    expect(failure(outcome).code).toBe('denied');
  });

  it.runIf(posix)('ends every session when its signal aborts (the host closing), and starts none after', async () => {
    const shell = setup();
    const { sessionId, pid } = ok(await shell.call('shell.start', { command: [node, '-e', "process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000)"] }));
    await shell[Symbol.asyncDispose]();
    await eventually(() => !isAlive(pid), { what: 'the session to end with the host' });
    await eventually(async () => ok(await shell.call('shell.read', { sessionId })).status === 'cancelled', { what: 'the cancelled status' });
    expect(failure(await shell.call('shell.start', { command: [node, '-e', '1'] })).code).toBe('unavailable');
  });

  it('sends shell_completed to the connection that started the session, and counts the limit per connection', async () => {
    await using shell = setup({ mode: 'full' }, { maxSessionsPerCaller: 1 });
    const seen: Record<'one' | 'two', ClientEvent[]> = { one: [], two: [] };
    const first: ClientConnection = { id: 'one', notify: (event) => seen.one.push(event) };
    const second: ClientConnection = { id: 'two', notify: (event) => seen.two.push(event) };
    const { sessionId } = ok(await shell.call('shell.start', { command: [node, '-e', 'process.stdout.write("12345"); process.stderr.write("67"); process.exitCode = 2'] }, 'same name', first));
    const sleeper = ok(await shell.call('shell.start', { command: [node, '-e', 'setInterval(() => {}, 1000)'] }, 'same name', second));
    expect(failure(await shell.call('shell.start', { command: [node, '-e', '1'] }, 'same name', second)).code).toBe('busy');
    await eventually(() => seen.one.length > 0, { what: 'the completion event' });
    expect(seen.one).toEqual([{ type: 'shell_completed', sessionId, status: 'exited', exitCode: 2, signal: null, stdoutBytes: 5, stderrBytes: 2, at: expect.any(Number) }]);
    expect(seen.two).toEqual([]);
    // Killed through any caller, the event goes to the connection that started the session.
    ok(await shell.call('shell.kill', { sessionId: sleeper.sessionId, graceMs: 5_000 }, 'same name', first));
    await eventually(() => seen.two.length === 1, { what: 'the second event' });
    expect(seen.two[0]).toMatchObject({ type: 'shell_completed', sessionId: sleeper.sessionId, status: 'killed', exitCode: null, signal: 'SIGTERM' });
    expect(seen.one).toHaveLength(1);
  });
});
