import { describe, expect, it } from 'vitest';
import { CapabilityError } from '../errors.js';
import { eventually, isAlive } from '../../../../tests/support/poll.js';
import { runChild, type ChildRunOptions } from './processCore.js';

const posix = process.platform !== 'win32';

/** Runs a `/bin/sh` script through the core and collects its stdout. */
async function sh(script: string, options: Partial<ChildRunOptions> = {}) {
  let stdout = '';
  const run = await runChild({
    file: '/bin/sh',
    args: ['-c', script],
    env: process.env,
    timeoutMs: 20_000,
    exitDrainMs: 200,
    killWaitMs: 3_000,
    onStdout: (chunk) => {
      stdout += chunk.toString('utf8');
    },
    ...options,
  });
  return { ...run, stdout };
}

/** Whether any process of the group `pgid` is still there. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

describe.skipIf(!posix)('runChild', () => {
  it('refuses to start once the signal has aborted, and starts nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    let output = false;
    const run = runChild({
      file: '/bin/sh',
      args: ['-c', 'echo started'],
      env: process.env,
      timeoutMs: 10_000,
      exitDrainMs: 100,
      killWaitMs: 1_000,
      signal: controller.signal,
      onStdout: () => {
        output = true;
      },
    });
    await expect(run).rejects.toBeInstanceOf(CapabilityError);
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
    expect(output).toBe(false);
  });

  it('rejects with "failed" when the program cannot start', async () => {
    const run = runChild({ file: '/nonexistent/capnode-tool', args: [], env: process.env, timeoutMs: 10_000, exitDrainMs: 100, killWaitMs: 1_000 });
    await expect(run).rejects.toMatchObject({ code: 'failed', message: 'Could not start /nonexistent/capnode-tool: not found.' });
  });

  it('reports a plain exit: code, no signal, not timed out or cancelled', async () => {
    const run = await sh('echo hello; exit 3');
    expect(run).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false, stdout: 'hello\n' });
    expect(run.pid).toBeTypeOf('number');
  });

  it('on timeout sends the group SIGTERM, then SIGKILL after the grace when the program ignores it', async () => {
    const graceMs = 1_500; // Long enough for a loaded machine to schedule the trap before SIGKILL.
    // The trap survives SIGTERM (it prints "term"); `sleep` is in the same group and dies of it.
    const run = await sh("trap 'echo term' TERM; echo ready; while :; do sleep 1; done", { timeoutMs: 1_000, killGraceMs: graceMs });
    expect(run.timedOut).toBe(true);
    expect(run.cancelled).toBe(false);
    expect(run.stdout).toContain('ready');
    expect(run.stdout).toContain('term');
    expect(run.signal).toBe('SIGKILL');
    expect(run.durationMs).toBeGreaterThanOrEqual(1_000 + graceMs - 50);
    expect(isAlive(run.pid!)).toBe(false);
    await eventually(() => !groupAlive(run.pid!), { what: 'the process group to be gone' });
  });

  it('on cancellation without a grace kills the whole group at once', async () => {
    const controller = new AbortController();
    const run = await sh('sleep 30 & echo ready; wait', {
      signal: controller.signal,
      onStdout: (chunk) => {
        if (chunk.toString('utf8').includes('ready')) controller.abort();
      },
    });
    expect(run).toMatchObject({ cancelled: true, timedOut: false, signal: 'SIGKILL', exitCode: null });
    await eventually(() => !groupAlive(run.pid!), { what: 'the process group to be gone' });
  });

  it('does not hang when a forked grandchild keeps the output pipe open: it resolves after the exit drain', async () => {
    const run = await sh('sleep 30 & echo started', { timeoutMs: 20_000, exitDrainMs: 300 });
    try {
      expect(run).toMatchObject({ exitCode: 0, signal: null, timedOut: false, cancelled: false, stdout: 'started\n' });
      expect(run.durationMs).toBeLessThan(10_000);
      // The grandchild is not the run's to kill on a normal exit (xclip's server must live on).
      expect(groupAlive(run.pid!)).toBe(true);
    } finally {
      killGroup(run.pid);
    }
  });

  it('keeps reading output during the exit drain, and stops at its end', async () => {
    const late = "(sleep 0.3; echo late; sleep 30) & echo early";
    const drained = await sh(late, { exitDrainMs: 3_000 });
    killGroup(drained.pid);
    expect(drained.stdout).toBe('early\nlate\n');
    expect(drained.exitCode).toBe(0);

    const cut = await sh("(sleep 2; echo late; sleep 30) & echo early", { exitDrainMs: 50 });
    killGroup(cut.pid);
    expect(cut.stdout).toBe('early\n');
    expect(cut.exitCode).toBe(0);
  });

  it('interrupt sends the signal to the program alone and lets it finish', async () => {
    const run = await sh("trap 'echo int; exit 0' INT; echo ready; while :; do sleep 0.1; done", {
      onStdout: (chunk, control) => {
        if (chunk.toString('utf8').includes('ready')) control.interrupt('SIGINT', 5_000);
      },
    });
    expect(run).toMatchObject({ exitCode: 0, signal: null, timedOut: false, cancelled: false });
  });

  it('interrupt kills the tree when the program does not exit within the grace', async () => {
    const run = await sh("trap '' INT; echo ready; while :; do sleep 0.1; done", {
      onStdout: (chunk, control) => {
        if (chunk.toString('utf8').includes('ready')) control.interrupt('SIGINT', 200);
      },
    });
    expect(run).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: false });
    await eventually(() => !groupAlive(run.pid!), { what: 'the process group to be gone' });
  });

  it('writes input to stdin and closes it', async () => {
    const run = await sh('cat', { input: 'piped text' });
    expect(run).toMatchObject({ exitCode: 0, stdout: 'piped text' });
  });
});
