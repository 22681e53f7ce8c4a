import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAgentArgumentsSha256 } from '@capnode/protocol/node';
import { cliPath, runCli } from '../cli/helpers.js';
import { startOpenAgentBridge, type OpenAgentBridge } from '../support/openAgentBridge.js';
import { eventually, isAlive } from '../support/poll.js';

/** `capnode serve` in its own process group, so `kill -9` takes the host and its children. */
function serveDetached(home: string): ChildProcess & { output(): string } {
  const env: NodeJS.ProcessEnv = { ...process.env, CAPNODE_HOME: home };
  delete env.CAPNODE_URL;
  delete env.CAPNODE_TOKEN;
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return Object.assign(child, { output: () => output });
}

/** Every live descendant of `pid` (from /proc), deepest first. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const visit = (parent: number) => {
    for (const child of parents.get(parent) ?? []) {
      visit(child);
      out.push(child);
    }
  };
  visit(pid);
  return out;
}

function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * `kill -9` of the host and every process under it (system.run's children run in their own process
 * groups). The tree is stopped first: killed one by one, a shell whose `sleep` died first could run
 * its next line before its own kill arrives.
 */
function killTree(child: ChildProcess): void {
  const pids = [...descendants(child.pid!), child.pid!];
  signalEach(pids, 'SIGSTOP');
  signalEach(pids, 'SIGKILL');
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

function writeSettings(home: string, bridge: OpenAgentBridge): void {
  const settings = {
    dashboard: { enabled: false },
    approvals: { notify: false },
    execApprovals: { mode: 'full' },
    openagent: { enabled: true, url: bridge.url, deviceId: 'device-1', accountId: 'account-1', heartbeatMs: 1000 },
  };
  writeFileSync(join(home, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
}

describe('OpenAgent channel: a host killed with -9 during a mutating call', () => {
  it('answers the resend after the restart with CLIENT_RESULT_INDETERMINATE and does not run it again', async () => {
    await using bridge = await startOpenAgentBridge();
    const home = mkdtempSync(join(tmpdir(), 'capnode-openagent-crash-'));
    const children: ChildProcess[] = [];
    try {
      writeSettings(home, bridge);
      const first = serveDetached(home);
      children.push(first);
      const hello = await bridge.hello(1);
      const started = join(home, 'started.txt');
      const done = join(home, 'done.txt');
      const pidFile = join(home, 'command.pid');
      // The command outlives any scheduling delay of a loaded machine between its start and the kill.
      const args = { command: ['sh', '-c', `echo $$ > '${pidFile}'; echo run >> '${started}'; sleep 30; echo line >> '${done}'`] };
      const call = await bridge.call('system.run', args, { deadline_ms: 60_000, arguments_sha256: openAgentArgumentsSha256(args) });
      await eventually(() => existsSync(started), { what: 'the command to start', timeoutMs: 20_000 });
      killTree(first);
      await eventually(() => !isAlive(first.pid!), { what: 'the host to die' });
      // Its child died with it.
      const commandPid = Number(readFileSync(pidFile, 'utf8'));
      await eventually(() => !isAlive(commandPid), { what: 'the command to die with the host', timeoutMs: 10_000 });
      expect(existsSync(done)).toBe(false);

      const second = serveDetached(home);
      children.push(second);
      const again = await bridge.hello(2);
      expect(again.client_instance_id).not.toBe(hello.client_instance_id);
      bridge.send({ ...call, generation: again.generation });
      const result = await eventually(() => bridge.frames.find((entry) => entry.connection === 2 && entry.frame.type === 'client_tool_result' && entry.frame.call_id === call.call_id)?.frame, { what: 'the answer', timeoutMs: 20_000 });
      expect(result).toMatchObject({ error: { code: 'CLIENT_RESULT_INDETERMINATE', data: { local_code: 'idempotency_indeterminate', manual_reconciliation_required: true } } });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(readFileSync(started, 'utf8')).toBe('run\n');

      // The CLI sees the channel, and its switch closes it.
      const status = await runCli(['openagent', 'status', '--json'], home);
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true, phase: 'connected', enabled: true, generation: 1 });
      const hostStatus = await runCli(['status'], home);
      expect(hostStatus.stdout).toContain('OpenAgent client capabilities');
      const disabled = await runCli(['openagent', 'disable'], home);
      expect(disabled.code).toBe(0);
      await eventually(() => bridge.connections[1]!.closed, { what: 'the channel to close', timeoutMs: 10_000 });
      const after = await runCli(['openagent', 'status', '--json'], home);
      expect(JSON.parse(after.stdout)).toMatchObject({ phase: 'disabled', enabled: false });
    } finally {
      for (const child of children) killGroup(child, 'SIGKILL');
      await Promise.all(children.map((child) => eventually(() => !isAlive(child.pid!), { what: 'the host to exit' }).catch(() => undefined)));
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
