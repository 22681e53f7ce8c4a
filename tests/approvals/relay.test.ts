import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, completion, repoRoot } from '../cli/helpers.js';
import { capnodeStdioTransport } from '../support/stdioClient.js';
import { nextPending, startTestHost, textOf } from './helpers.js';

// The SDK client is a devDependency of the CLI package; tests/ has no node_modules of its own.
const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

function countingRun(file: string) {
  return { command: [process.execPath, '-e', `require('node:fs').appendFileSync(${JSON.stringify(file)}, 'ran\\n'); console.log(6*7)`] };
}

async function connectStdio(home: string, name: string) {
  const { transport, stderr } = capnodeStdioTransport(cliPath, home);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return Object.assign(client, { stderr, [Symbol.asyncDispose]: () => client.close() });
}

describe('capnode mcp while a host runs', () => {
  it("relays a real SDK stdio client to the running host: its approval is in that host's queue, answered there, and the held call returns the result", async () => {
    await using test = await startTestHost();
    const marker = join(test.home, 'runs.txt');
    await using client = await connectStdio(test.home, 'relayed-client');
    const status = await client.callTool({ name: 'app.status', arguments: {} });
    // The running host answers: its HTTP listener serves, no stdio host of its own.
    expect(status.structuredContent).toMatchObject({ mcp: { state: 'listening' }, stdio: { state: 'stopped' } });
    expect(client.stderr()).toContain('relaying to the running host');

    const call = client.callTool({ name: 'system.run', arguments: countingRun(marker) });
    const pending = await nextPending(test);
    expect(pending.caller).toBe('relayed-client');
    // The running host's status counts it (what `capnode status` and the dashboard show).
    const hostStatus = await client.callTool({ name: 'app.status', arguments: {} });
    expect(hostStatus.structuredContent).toMatchObject({ execApprovals: { pending: 1 } });
    expect(await test.answer(pending, 'allow-once')).toBe(200);
    const result = await call;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(result.structuredContent).toMatchObject({ stdout: '42\n' });
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
  });

  it('forwards progress of a waiting call and the approval question path stays the host\'s', async () => {
    await using test = await startTestHost({ settings: { approvals: { progressIntervalMs: 100 } } });
    await using client = await connectStdio(test.home, 'progress-client');
    const messages: string[] = [];
    const call = client.callTool({ name: 'system.run', arguments: countingRun(join(test.home, 'runs.txt')) }, { onprogress: (progress) => messages.push(String(progress.message)) });
    const pending = await nextPending(test);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(messages.some((message) => message.includes(`waiting for approval ${pending.id}`))).toBe(true);
    expect(await test.answer(pending, 'deny')).toBe(200);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/denied by the user/);
  });

  it("forwards the client's cancellation: the host stops the running command", async () => {
    await using test = await startTestHost({ settings: { execApprovals: { mode: 'full' } } });
    const marker = join(test.home, 'late.txt');
    await using client = await connectStdio(test.home, 'cancelling-client');
    const controller = new AbortController();
    const script = `setTimeout(() => require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran'), 1500)`;
    const call = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', script] } }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Mode full: it runs without an approval, so only the forwarded cancel can stop it.
    expect(await test.pending()).toEqual([]);
    controller.abort(new Error('user cancelled'));
    await expect(call).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(existsSync(marker)).toBe(false);
  });

  it('exits by itself when the client closes stdin', async () => {
    await using test = await startTestHost();
    const child = spawn(process.execPath, [cliPath, 'mcp'], { env: { ...process.env, CAPNODE_HOME: test.home }, stdio: ['pipe', 'pipe', 'pipe'] });
    const done = completion(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })}\n`);
    child.stdin.end();
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    const lines = out.trim().split('\n').map((line) => JSON.parse(line) as { id: number; result?: { tools?: unknown[] } });
    expect(lines.map((line) => line.id).sort()).toEqual([1, 2]);
    expect(lines.find((line) => line.id === 2)!.result!.tools!.length).toBeGreaterThan(5);
    expect(existsSync(join(test.home, 'run'))).toBe(true);
  });
});
