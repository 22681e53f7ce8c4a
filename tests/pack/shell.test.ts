import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { eventually, isAlive } from '../support/poll.js';
import { startTestHost, type TestHost, type ToolOutcome } from '../support/testHost.js';

const posix = process.platform !== 'win32';
const node = process.execPath;

type Call = (name: string, args: Record<string, unknown>) => Promise<ToolOutcome & { failure?: string | undefined }>;

/** A real host (its own pack, shell plugin included) with the exec policy in `mode`. */
function shellHost(mode: 'full' | 'ask' | 'allowlist' | 'deny', shell: Record<string, unknown> = {}): Promise<TestHost> {
  return startTestHost({ settings: { execApprovals: { mode }, pluginSettings: { shell } } });
}

/** The notification a shell session's end sends to the MCP connection that started it. */
const SHELL_COMPLETED = 'notifications/capnode/shell_completed';

/** The smallest client both SDK generations fit: calls, and the notifications nobody else handles. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  fallbackNotificationHandler?: ((notification: { method: string; params?: unknown }) => Promise<void>) | undefined;
  close(): Promise<void>;
}

/** Calls a tool over `client` (default the host's SDK v2 HTTP client), keeping the failure code of an error result. */
function caller(host: TestHost, client: AnyClient = host.client as unknown as AnyClient): Call {
  return async (name, args) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content?: { type: string; text?: string }[];
      structuredContent?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    };
    const failure = (result._meta?.['capnode/failure'] as { code?: string } | undefined)?.code;
    return { isError: result.isError === true, text: (result.content ?? []).map((part) => part.text ?? '').join('\n'), structured: result.structuredContent, failure };
  };
}

function ok(outcome: ToolOutcome): Record<string, any> {
  if (outcome.isError) throw new Error(`expected success, got: ${outcome.text}`);
  return outcome.structured as Record<string, any>;
}

/** Reads `sessionId` incrementally (each stream from its last nextCursor) until `done` holds. */
async function readUntil(call: Call, sessionId: string, done: (read: Record<string, any>, stdout: string) => boolean, from = { stdoutCursor: 0, stderrCursor: 0 }) {
  let stdout = '';
  let stderr = '';
  const cursors = { ...from };
  const reads: Record<string, any>[] = [];
  return eventually(
    async () => {
      const read = ok(await call('shell.read', { sessionId, ...cursors, waitMs: 250 }));
      reads.push(read);
      stdout += read.stdout.text;
      stderr += read.stderr.text;
      cursors.stdoutCursor = read.stdout.nextCursor;
      cursors.stderrCursor = read.stderr.nextCursor;
      return done(read, stdout) ? { read, stdout, stderr, reads } : undefined;
    },
    { what: `output of ${sessionId}`, timeoutMs: 20_000 },
  );
}

const ECHO_LINES = 'process.stdin.setEncoding("utf8"); process.stdin.on("data", (d) => process.stdout.write("echo:" + d)); process.stdin.on("end", () => { console.error("stdin closed"); process.exit(4); });';

describe('shell sessions over MCP HTTP (real host, SDK v2 client)', () => {
  it('starts a real process that outlives the call, reads its output incrementally, writes its stdin, and reports the exit code', async () => {
    await using host = await shellHost('full');
    const call = caller(host);
    const started = ok(await call('shell.start', { command: [node, '-e', ECHO_LINES] }));
    expect(started).toMatchObject({ status: 'running', stdinOpen: true });
    const { sessionId } = started;
    expect(ok(await call('shell.write', { sessionId, data: 'first\n' }))).toMatchObject({ bytes: 6 });
    const first = await readUntil(call, sessionId, (_read, stdout) => stdout.includes('echo:first\n'));
    ok(await call('shell.write', { sessionId, data: 'second\n' }));
    // The next read starts at the previous read's cursor: only the new line comes back.
    const next = ok(await call('shell.read', { sessionId, stdoutCursor: first.read.stdout.nextCursor, waitMs: 5_000 }));
    expect(next.stdout).toMatchObject({ text: 'echo:second\n', cursor: 11 });
    ok(await call('shell.write', { sessionId, eof: true }));
    const ended = await readUntil(call, sessionId, (read) => read.status !== 'running');
    expect(ended.read).toMatchObject({ status: 'exited', exitCode: 4, signal: null });
    expect(ended.stderr).toBe('stdin closed\n');
    const listed = ok(await call('shell.list', {})).sessions as Record<string, any>[];
    expect(listed).toEqual([expect.objectContaining({ sessionId, status: 'exited', exitCode: 4, stdoutBytes: 23, stderrBytes: 13 })]);
  });

  it.runIf(posix)('kills the process group: TERM, then KILL after the grace; the child of the child dies too', async () => {
    await using host = await shellHost('full');
    const call = caller(host);
    const script = `require("node:child_process").spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); console.log('grandchild ' + process.pid); setInterval(() => {}, 1000)"], { stdio: "inherit" }); setInterval(() => {}, 1000);`;
    const { sessionId, pid } = ok(await call('shell.start', { command: [node, '-e', script] }));
    const { stdout } = await readUntil(call, sessionId, (_read, text) => /grandchild \d+\n/.test(text));
    const grandchild = Number(/grandchild (\d+)/.exec(stdout)![1]);
    expect(isAlive(pid) && isAlive(grandchild)).toBe(true);
    const killed = ok(await call('shell.kill', { sessionId, graceMs: 300 }));
    expect(killed).toMatchObject({ sessionId, status: 'killed', wasRunning: true });
    await eventually(() => !isAlive(pid) && !isAlive(grandchild), { what: 'the whole process group to die' });
    expect(ok(await call('shell.read', { sessionId }))).toMatchObject({ status: 'killed', exitCode: null, signal: expect.stringMatching(/^SIG(TERM|KILL)$/) });
  });

  it('a shell line runs in the platform shell when the policy allows it', async () => {
    await using host = await shellHost('full');
    const call = caller(host);
    const { sessionId } = ok(await call('shell.start', { command: 'echo "$GREETING" && echo oops >&2 && exit 3', shell: true, env: { GREETING: 'hi there' } }));
    const { read, stdout, stderr } = await readUntil(call, sessionId, (result) => result.status !== 'running');
    expect([read.exitCode, stdout, stderr]).toEqual([3, 'hi there\n', 'oops\n']);
  });

  it("is decided by the exec policy: mode 'deny' refuses, 'allowlist' refuses a shell line, 'ask' asks once for the session's command", async () => {
    {
      await using host = await shellHost('deny');
      const refused = await caller(host)('shell.start', { command: [node, '-e', '1'] });
      expect(refused).toMatchObject({ isError: true, failure: 'denied', text: expect.stringMatching(/shell\.start .* is refused: exec approvals are in mode 'deny'/) });
      expect(ok(await caller(host)('shell.list', {})).sessions).toEqual([]);
    }
    {
      await using host = await shellHost('allowlist');
      const refused = await caller(host)('shell.start', { command: 'sleep 1 | cat', shell: true });
      expect(refused).toMatchObject({ isError: true, failure: 'denied', text: expect.stringMatching(/shell command lines are never allowlisted/) });
    }
    await using host = await shellHost('ask');
    const call = caller(host);
    host.answerWith('deny');
    expect(await call('shell.start', { command: [node, '-e', '1'] })).toMatchObject({ isError: true, failure: 'denied' });
    host.answerWith('allow-once');
    const { sessionId } = ok(await call('shell.start', { command: [node, '-e', ECHO_LINES] }));
    expect(host.asked.map((approval) => [approval.command, approval.argv])).toEqual([
      ['shell.start', [node, '-e', '1']],
      ['shell.start', [node, '-e', ECHO_LINES]],
    ]);
    ok(await call('shell.write', { sessionId, data: 'x\n' }));
    await readUntil(call, sessionId, (_read, stdout) => stdout === 'echo:x\n');
    ok(await call('shell.kill', { sessionId, graceMs: 0 }));
    ok(await call('shell.list', {}));
    expect(host.asked).toHaveLength(2);
  });

  it('a client that can neither wait nor be asked gets approval_pending; after the answer its identical retry starts exactly one session, and the next session asks again', async () => {
    await using host = await startTestHost({ settings: { execApprovals: { mode: 'ask' }, approvals: { wait: 'return' } } });
    const token = readFileSync(join(host.home, 'mcp-token'), 'utf8').trim();
    const plain = new ClientV1({ name: 'plain-v1', version: '1.0.0' });
    await plain.connect(new HttpTransportV1(new URL(host.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const call = caller(host, plain as unknown as AnyClient);
      const args = { command: [node, '-e', 'setInterval(() => {}, 1000)'] };
      expect(await call('shell.start', args)).toMatchObject({ isError: true, failure: 'approval_pending' });
      expect(host.asked).toHaveLength(1);
      host.host.approvals.resolve(host.asked[0]!.id, 'allow-once');
      const started = ok(await call('shell.start', args));
      expect(ok(await call('shell.list', {})).sessions).toEqual([expect.objectContaining({ sessionId: started.sessionId, status: 'running' })]);
      ok(await call('shell.kill', { sessionId: started.sessionId, graceMs: 0 }));
      expect(await call('shell.start', args)).toMatchObject({ isError: true, failure: 'approval_pending' });
      expect(host.asked).toHaveLength(2);
      expect(ok(await call('shell.list', {})).sessions).toHaveLength(1);
    } finally {
      await plain.close();
    }
  });

  it('limits running sessions per caller (pluginSettings.shell.maxSessionsPerCaller): busy until one ends', async () => {
    await using host = await shellHost('full', { maxSessionsPerCaller: 2 });
    const call = caller(host);
    const sleeper = { command: [node, '-e', 'setInterval(() => {}, 1000)'] };
    const first = ok(await call('shell.start', sleeper));
    ok(await call('shell.start', sleeper));
    const refused = await call('shell.start', sleeper);
    expect(refused).toMatchObject({ isError: true, failure: 'busy', text: expect.stringMatching(/limit is 2/) });
    ok(await call('shell.kill', { sessionId: first.sessionId, graceMs: 0 }));
    ok(await call('shell.start', sleeper));
  });

  it('keeps at most pluginSettings.shell.maxOutputBytes per stream; a read cut at maxBytes is an exact prefix with truncated: true', async () => {
    await using host = await shellHost('full', { maxOutputBytes: 2048 });
    const call = caller(host);
    const { sessionId } = ok(await call('shell.start', { command: [node, '-e', 'for (let i = 0; i < 1000; i++) process.stdout.write(String(i).padStart(4, "0") + "\\n")'] }));
    await readUntil(call, sessionId, (read) => read.status === 'exited');
    const whole = Array.from({ length: 1000 }, (_, index) => `${String(index).padStart(4, '0')}\n`).join('');
    const kept = ok(await call('shell.read', { sessionId, maxBytes: 4096 }));
    expect(kept.stdout).toMatchObject({ cursor: 2952, droppedBytes: 2952, totalBytes: 5000, nextCursor: 5000, truncated: false });
    expect(kept.stdout.text).toBe(whole.slice(2952));
    const cut = ok(await call('shell.read', { sessionId, stdoutCursor: 4000, maxBytes: 100 }));
    expect(cut.stdout).toMatchObject({ text: whole.slice(4000, 4100), nextCursor: 4100, truncated: true });
    expect(cut.truncated).toBe(true);
  });

  it('answers bad input with isError and a failure code: unknown session, cursor out of range, bad arguments, closed stdin', async () => {
    await using host = await shellHost('full');
    const call = caller(host);
    for (const name of ['shell.read', 'shell.write', 'shell.kill']) {
      expect(await call(name, { sessionId: 'sh-0123456789ab' }), name).toMatchObject({ isError: true, failure: 'invalid_arguments', text: expect.stringContaining("No shell session 'sh-0123456789ab'") });
    }
    const { sessionId } = ok(await call('shell.start', { command: [node, '-e', 'process.stdout.write("done")'] }));
    await readUntil(call, sessionId, (read) => read.status === 'exited');
    expect(await call('shell.read', { sessionId, stdoutCursor: 5 })).toMatchObject({ isError: true, failure: 'invalid_arguments', text: expect.stringMatching(/stdoutCursor 5 is beyond the 4 bytes/) });
    expect(await call('shell.write', { sessionId, data: 'late' })).toMatchObject({ isError: true, failure: 'failed', text: expect.stringMatching(/has ended/) });
    expect(await call('shell.start', { command: [] })).toMatchObject({ isError: true, failure: 'invalid_arguments' });
    expect(await call('shell.start', { command: [node], cwd: '/definitely/not/here' })).toMatchObject({ isError: true, failure: 'invalid_arguments', text: expect.stringMatching(/does not exist/) });
    expect(await call('shell.start', { command: ['capnode-no-such-program-x'] })).toMatchObject({ isError: true, failure: 'failed', text: expect.stringMatching(/not found/) });
    expect(await call('shell.read', { sessionId, maxBytes: 10 * 1024 * 1024 })).toMatchObject({ isError: true, failure: 'invalid_arguments' });
  });

  it.runIf(posix)('sessions end with the host: closing it kills every process group, and what an ended session left running', async () => {
    const host = await shellHost('full');
    const call = caller(host);
    const { sessionId, pid } = ok(await call('shell.start', { command: 'sleep 300 & echo "$!"; wait', shell: true }));
    const { stdout } = await readUntil(call, sessionId, (_read, text) => /\d+\n/.test(text));
    const background = Number(stdout.trim());
    // This program exits at once, leaving a child in its group that holds its output open.
    const left = ok(await call('shell.start', { command: 'sleep 300 & echo "$!"', shell: true }));
    const leftover = await readUntil(call, left.sessionId, (read) => read.status !== 'running');
    expect(leftover.read).toMatchObject({ status: 'exited', exitCode: 0 });
    const orphan = Number(leftover.stdout.trim());
    expect(isAlive(orphan)).toBe(true);
    await host[Symbol.asyncDispose]();
    await eventually(() => !isAlive(pid) && !isAlive(background) && !isAlive(orphan), { what: 'the sessions to end with the host' });
  });

  it.each([
    ['SDK v1 client (stateful session)', 'v1'],
    ['SDK v2 client (initialize-era session)', 'v2'],
  ] as const)('sends %s a completion notification naming the session id, exit code and byte counts', async (_label, generation) => {
    await using host = await shellHost('full');
    const token = readFileSync(join(host.home, 'mcp-token'), 'utf8').trim();
    const requestInit = { headers: { Authorization: `Bearer ${token}` } };
    const received: { method: string; params?: unknown }[] = [];
    const handler = async (notification: { method: string; params?: unknown }) => {
      received.push(notification);
    };
    let client: AnyClient;
    if (generation === 'v1') {
      const v1 = new ClientV1({ name: 'shell-v1', version: '1.0.0' });
      v1.fallbackNotificationHandler = handler;
      await v1.connect(new HttpTransportV1(new URL(host.url), { requestInit }));
      client = v1 as unknown as AnyClient;
    } else {
      const v2 = new ClientV2({ name: 'shell-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
      v2.fallbackNotificationHandler = handler;
      await v2.connect(new HttpTransportV2(new URL(host.url), { requestInit }));
      client = v2 as unknown as AnyClient;
    }
    try {
      const call = caller(host, client);
      const finished = ok(await call('shell.start', { command: [node, '-e', 'process.stdout.write("x".repeat(70000)); process.stderr.write("bad"); process.exitCode = 5'] }));
      const killed = ok(await call('shell.start', { command: [node, '-e', 'setInterval(() => {}, 1000)'] }));
      const done = await eventually(() => received.find((notification) => (notification.params as { sessionId?: string })?.sessionId === finished.sessionId), { what: 'the completion notification' });
      expect(done).toMatchObject({ method: SHELL_COMPLETED, params: { sessionId: finished.sessionId, status: 'exited', exitCode: 5, signal: null, stdoutBytes: 70000, stderrBytes: 3, at: expect.any(Number) } });
      ok(await call('shell.kill', { sessionId: killed.sessionId, graceMs: 5_000 }));
      const ended = await eventually(() => received.find((notification) => (notification.params as { sessionId?: string })?.sessionId === killed.sessionId), { what: 'the kill notification' });
      expect(ended).toMatchObject({ method: SHELL_COMPLETED, params: { status: 'killed', exitCode: null, signal: 'SIGTERM' } });
    } finally {
      await client.close();
    }
  });

  it('sends the notification to no other client, and none over the per-request (2026-07-28) HTTP era, which keeps no connection', async () => {
    await using host = await shellHost('full');
    const token = readFileSync(join(host.home, 'mcp-token'), 'utf8').trim();
    const perRequest = new ClientV2({ name: 'per-request', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await perRequest.connect(new HttpTransportV2(new URL(host.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    expect(perRequest.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const seen: { method: string; params?: unknown }[] = [];
    (host.client as unknown as AnyClient).fallbackNotificationHandler = async (notification) => {
      seen.push(notification);
    };
    try {
      const call = caller(host, perRequest as unknown as AnyClient);
      const { sessionId } = ok(await call('shell.start', { command: [node, '-e', '1'] }));
      await readUntil(call, sessionId, (read) => read.status === 'exited');
      // Any client may read the session; only the event is the starter's (here: nobody's).
      expect(ok(await caller(host)('shell.read', { sessionId }))).toMatchObject({ status: 'exited', exitCode: 0 });
      const own = ok(await caller(host)('shell.start', { command: [node, '-e', '1'] }));
      await eventually(() => seen.find((notification) => notification.method === SHELL_COMPLETED), { what: "the session client's own notification" });
      expect(seen.filter((notification) => notification.method === SHELL_COMPLETED).map((notification) => (notification.params as { sessionId: string }).sessionId)).toEqual([own.sessionId]);
    } finally {
      await perRequest.close();
    }
  });
});

/** The built CLI (`pnpm turbo run build --filter capnode...`): `capnode mcp` serves MCP on stdio. */
const cliPath = fileURLToPath(new URL('../../apps/cli/dist/bin.js', import.meta.url));

describe.runIf(posix)('shell sessions over MCP stdio (capnode mcp, SDK v2 client)', () => {
  it('starts, reads incrementally, writes stdin, kills a process group, notifies the completion; sessions end when the host exits', async () => {
    expect(existsSync(cliPath), `${cliPath} is missing; build first: pnpm turbo run build --filter capnode...`).toBe(true);
    const home = mkdtempSync(join(tmpdir(), 'capnode-shell-stdio-'));
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ execApprovals: { mode: 'full' } }), { mode: 0o600 });
    const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: home }, stderr: 'pipe' });
    const client = new ClientV2({ name: 'shell-stdio', version: '1.0.0' });
    const received: { method: string; params?: unknown }[] = [];
    client.fallbackNotificationHandler = async (notification) => {
      received.push(notification);
    };
    let survivor = 0;
    try {
      await client.connect(transport);
      const call = caller({} as TestHost, client as unknown as AnyClient);
      const echo = ok(await call('shell.start', { command: [node, '-e', ECHO_LINES] }));
      ok(await call('shell.write', { sessionId: echo.sessionId, data: 'over stdio\n' }));
      const first = await readUntil(call, echo.sessionId, (_read, stdout) => stdout === 'echo:over stdio\n');
      ok(await call('shell.write', { sessionId: echo.sessionId, data: 'again\n', eof: true }));
      const rest = await readUntil(call, echo.sessionId, (read) => read.status !== 'running', { stdoutCursor: first.read.stdout.nextCursor, stderrCursor: first.read.stderr.nextCursor });
      expect([rest.stdout, rest.stderr, rest.read.exitCode]).toEqual(['echo:again\n', 'stdin closed\n', 4]);
      const done = await eventually(() => received.find((notification) => (notification.params as { sessionId?: string })?.sessionId === echo.sessionId), { what: 'the completion notification' });
      expect(done).toMatchObject({ method: SHELL_COMPLETED, params: { sessionId: echo.sessionId, status: 'exited', exitCode: 4, signal: null, stdoutBytes: 27, stderrBytes: 13 } });

      const tree = ok(await call('shell.start', { command: 'sleep 300 & echo "$!"; wait', shell: true }));
      const { stdout } = await readUntil(call, tree.sessionId, (_read, text) => /\d+\n/.test(text));
      const background = Number(stdout.trim());
      ok(await call('shell.kill', { sessionId: tree.sessionId, graceMs: 200 }));
      await eventually(() => !isAlive(tree.pid) && !isAlive(background), { what: 'the killed process group to die' });
      await eventually(() => received.find((notification) => (notification.params as { sessionId?: string })?.sessionId === tree.sessionId), { what: 'the kill notification' });

      const left = ok(await call('shell.start', { command: [node, '-e', 'setInterval(() => {}, 1000)'] }));
      survivor = left.pid;
    } finally {
      await client.close();
      rmSync(home, { recursive: true, force: true });
    }
    // The client closing stdin ends the host, and the host ends the session it leaves behind.
    await eventually(() => !isAlive(survivor), { what: 'the session to end with the host', timeoutMs: 20_000 });
  });
});

/** The built capabilities package, for a process of its own (`pnpm turbo run build --filter capnode...`). */
const capabilitiesDist = fileURLToPath(new URL('../../packages/capabilities/dist/', import.meta.url));

describe.runIf(posix)('shell sessions and the process that hosts them', () => {
  it('closing the plugin ends a session that ignores SIGTERM, and the host process then exits by itself', async () => {
    expect(existsSync(join(capabilitiesDist, 'pack.js')), 'build first: pnpm turbo run build --filter capnode...').toBe(true);
    const dist = (file: string) => JSON.stringify(pathToFileURL(join(capabilitiesDist, file)).href);
    const script = `
      const { createApprovalBroker, createExecApprovalHook, createInvoker, createMemoryExecApprovalStore, createRegistry } = await import(${dist('index.js')});
      const { createNodeExecResolvers } = await import(${dist('node.js')});
      const { createShellCapability } = await import(${dist('pack.js')});
      const controller = new AbortController();
      const store = createMemoryExecApprovalStore({ mode: 'full' });
      const broker = createApprovalBroker({ waitMode: 'block' });
      const registry = createRegistry([createShellCapability({ signal: controller.signal })]);
      const invoker = createInvoker({ registry, hooks: [createExecApprovalHook({ store, broker, ...createNodeExecResolvers() })] });
      const stubborn = [process.execPath, '-e', "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)"];
      const { result } = await invoker.invoke({ command: 'shell.start', args: { command: stubborn }, transport: 'internal' });
      for (;;) {
        const read = await invoker.invoke({ command: 'shell.read', args: { sessionId: result.structured.sessionId, waitMs: 1000 }, transport: 'internal' });
        if (read.result.structured.stdout.text.includes('ready')) break;
      }
      console.log(result.structured.pid);
      controller.abort();
      await broker.close();
    `;
    const host = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    host.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => host.once('exit', (code) => resolve(code)));
    try {
      const pid = Number((await eventually(() => /^(\d+)$/m.exec(out), { what: 'the session pid', timeoutMs: 20_000 }))[1]);
      expect(await exit).toBe(0);
      await eventually(() => !isAlive(pid), { what: 'the stubborn session to be killed' });
    } finally {
      host.kill('SIGKILL');
    }
  });
});
