import { describe, expect, it } from 'vitest';
import { completion, runCli, slowPoll, spawnCli, startServe, tempHome } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';

interface Listed {
  approvals: { id: string; argsHash: string }[];
}

describe('answering approvals from the CLI', () => {
  it('a waiting direct call says what it waits for; list shows the whole escaped summary; watch answers it from piped stdin', async () => {
    using dir = tempHome();
    await using _serve = await startServe(dir.home);
    const script = 'console.log(6*7); `\u001b[2K\r\u202e`';
    const call = spawnCli(['--command', 'system.run', '--params', JSON.stringify({ command: [process.execPath, '-e', script], cwd: dir.home })], dir.home);
    let callErr = '';
    call.stderr.setEncoding('utf8').on('data', (chunk: string) => (callErr += chunk));
    const done = completion(call);
    const listed = await eventually(async () => (JSON.parse((await runCli(['approvals', 'list', '--json'], dir.home)).stdout) as Listed).approvals[0], slowPoll('a pending approval'));
    const id = listed.id;

    // The waiting caller says so on stderr, with the id and how to answer.
    await eventually(() => (callErr.includes(`waiting for approval ${id} of system.run`) ? true : undefined), slowPoll('the waiting line'));
    expect(callErr).toContain(`capnode approvals allow ${id}`);
    expect(callErr).not.toMatch(/[\u001b\u202e]/);

    const human = await runCli(['approvals', 'list'], dir.home);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(id);
    expect(human.stdout).toContain(`program: ${process.execPath}`);
    expect(human.stdout).toContain('argv: [');
    expect(human.stdout).toContain(`cwd: ${dir.home}`);
    expect(human.stdout).toContain('shell: no');
    expect(human.stdout).toContain('transport: mcp-http');
    expect(human.stdout).toMatch(/caller: .*/);
    expect(human.stdout).toContain(`hash: ${listed.argsHash.replace('sha256:', '').slice(0, 12)}`);
    expect(human.stdout).toContain('\\u{001b}[2K');
    expect(human.stdout).toContain('\\u{202e}');
    expect(human.stdout).not.toMatch(/[\u001b\r\u202e]/);

    // An answer for a hash the person did not see is refused.
    const wrong = await runCli(['approvals', 'allow', id, '--hash', 'ffffffff'], dir.home);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('not the request you saw');

    const watch = spawnCli(['approvals', 'watch'], dir.home);
    let watchOut = '';
    watch.stdout.setEncoding('utf8').on('data', (chunk: string) => (watchOut += chunk));
    const watched = completion(watch);
    await eventually(() => (watchOut.includes(`answer ${id}?`) ? true : undefined), slowPoll('the watch prompt'));
    expect(watchOut).toContain('pending approval:');
    expect(watchOut).toContain(`program: ${process.execPath}`);
    expect(watchOut).not.toMatch(/[\u001b\r\u202e]/);
    watch.stdin.write('a\n');
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('42');
    await eventually(() => (watchOut.includes(`${id}: allowed once`) ? true : undefined), slowPoll('the watch to report the answer'));

    // A new approval appears live in the same watch; `d` denies it.
    const second = completion(spawnCli(['--command', 'system.run', '--params', JSON.stringify({ command: [process.execPath, '-e', '1'] })], dir.home));
    await eventually(() => ((watchOut.match(/pending approval:/g) ?? []).length === 2 ? true : undefined), slowPoll('the second approval in the watch'));
    watch.stdin.write('d\n');
    const deniedResult = await second;
    expect(deniedResult.code).toBe(1);
    expect(deniedResult.stderr).toMatch(/denied by the user/);
    watch.stdin.end();
    const ended = await watched;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toMatch(/: denied/);
  });

  it('capnode --command system.execApprovals.set waits for its approval like system.run, and the allowed change is applied', async () => {
    using dir = tempHome();
    await using _serve = await startServe(dir.home);
    const call = spawnCli(['--command', 'system.execApprovals.set', '--params', JSON.stringify({ add: ['git status'] })], dir.home);
    let callErr = '';
    call.stderr.setEncoding('utf8').on('data', (chunk: string) => (callErr += chunk));
    const done = completion(call);
    const listed = await eventually(async () => (JSON.parse((await runCli(['approvals', 'list', '--json'], dir.home)).stdout) as Listed).approvals[0], slowPoll('a pending approval'));
    await eventually(() => (callErr.includes(`waiting for approval ${listed.id} of system.execApprovals.set`) ? true : undefined), slowPoll('the waiting line'));
    expect((await runCli(['approvals', 'allow', listed.id], dir.home)).code).toBe(0);
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('git status');
    expect(result.stderr).not.toContain('approval_pending');
  });

  it('watch without a running host says how to start one', async () => {
    using dir = tempHome();
    const watch = spawnCli(['approvals', 'watch', '--url', 'http://127.0.0.1:9/'], dir.home);
    const result = await completion(watch);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('start one with: capnode serve');
  });
});
