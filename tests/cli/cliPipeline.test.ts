import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, runCli, slowPoll, tempHome } from './helpers.js';
import { everythingScript } from '../support/mcpServers.js';
import { eventually } from '../support/poll.js';

const addEverything = ['servers', 'add', 'everything', '--command', process.execPath, '--', everythingScript, 'stdio'];
const hasScript = process.platform === 'linux' && existsSync('/usr/bin/script');

function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Runs the CLI on a real pseudo-terminal (util-linux `script`), typing `answer` once the prompt shows. */
async function onTerminal(args: readonly string[], home: string, answer: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, cliPath, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...process.env, CAPNODE_HOME: home }, stdio: 'pipe' });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  await eventually(() => output.includes('allow once? [y/N]'), slowPoll('the approval prompt'));
  child.stdin.write(answer);
  const code = await exited;
  return { code, output };
}

describe('the CLI runs calls through the host pipeline (approvals, audit)', () => {
  it.runIf(hasScript)('asks on the terminal for a direct call to an imported server: y runs it, anything else denies; both audited', async () => {
    using dir = tempHome();
    expect((await runCli(addEverything, dir.home)).code).toBe(0);
    const allowed = await onTerminal(['call', 'everything__echo', '--params', '{"message":"from a person"}', '--url', 'http://127.0.0.1:9/'], dir.home, 'y\r');
    expect(allowed.output).toContain("capnode call: approval needed: everything__echo (tool 'echo' of MCP server 'everything') wants to run with {\"message\":\"from a person\"}");
    expect(allowed.code, allowed.output).toBe(0);
    expect(allowed.output).toContain('Echo: from a person');

    const refused = await onTerminal(['call', 'everything__echo', '--params', '{"message":"no"}', '--url', 'http://127.0.0.1:9/'], dir.home, 'n\r');
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('capnode: denied');
    expect(refused.output).not.toContain('Echo: no');

    const audit = readFileSync(join(dir.home, 'audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audit.filter((record) => record.command === 'everything__echo').map((record) => record.outcome)).toEqual(['ok', 'denied']);
  }, 60_000);
});
