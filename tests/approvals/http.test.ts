import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { nextPending, startTestHost, textOf } from './helpers.js';


async function connectV1(url: string, token: string, name: string): Promise<ClientV1 & AsyncDisposable> {
  const client = new ClientV1({ name, version: '1.0.0' });
  await client.connect(new HttpTransportV1(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** A node script that appends one line to `file` per run, so "ran exactly once" is countable. */
function countingRun(file: string) {
  return { command: [process.execPath, '-e', `require('node:fs').appendFileSync(${JSON.stringify(file)}, 'ran\\n'); console.log(6*7)`] };
}

function runs(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

describe('approvals over real HTTP sockets', () => {
  it('an SDK v1 client with resetTimeoutOnProgress and a 15 s timeout gets a system.run whose approval is answered after 25 s', { timeout: 60_000 }, async () => {
    await using test = await startTestHost();
    await using client = await connectV1(test.url, test.mcpToken, 'patient-v1');
    const progress: { progress: number; message?: string | undefined }[] = [];
    const started = Date.now();
    const call = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)'] } }, undefined, {
      timeout: 15_000,
      resetTimeoutOnProgress: true,
      onprogress: (update) => progress.push(update),
    });
    const pending = await nextPending(test);
    expect(pending.transport).toBe('mcp-http');
    await new Promise((resolve) => setTimeout(resolve, 25_000 - (Date.now() - started)));
    expect(await test.answer(pending, 'allow-once')).toBe(200);
    const result = await call;
    expect(Date.now() - started).toBeGreaterThanOrEqual(25_000);
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ stdout: '42\n', exitCode: 0 });
    // At least one report per 10 s (5 s by default), each naming the approval and how to answer it.
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect(progress[0]!.message).toContain(`capnode approvals allow ${pending.id}`);
  });

  it('with holdMs 0, a client with neither progress nor elicitation gets approval_pending at once; an identical retry runs exactly once after allow, and is denied after deny', async () => {
    await using test = await startTestHost({ settings: { approvals: { holdMs: 0 } } });
    const marker = join(test.home, 'runs.txt');
    await using client = await connectV1(test.url, test.mcpToken, 'plain-v1');
    const args = countingRun(marker);

    const first = await client.callTool({ name: 'system.run', arguments: args });
    expect(first.isError).toBe(true);
    const [pending] = await test.pending();
    expect(pending).toBeDefined();
    expect(textOf(first)).toContain(`capnode approvals allow ${pending!.id}`);
    expect(textOf(first)).toMatch(/retry this identical call/i);
    expect(textOf(first)).toContain('Approvals page of the capnode dashboard');

    // Still pending: the retry names the same approval and adds none.
    const again = await client.callTool({ name: 'system.run', arguments: args });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain(pending!.id);
    expect(await test.pending()).toHaveLength(1);

    // An answer bound to another hash is refused.
    expect(await test.answer({ ...pending!, argsHash: 'sha256:0000' }, 'allow-once')).toBe(409);
    expect(await test.answer(pending!, 'allow-once')).toBe(200);
    // Allowed, not run yet: listed as waiting for the agent's retry until it runs.
    const [allowed] = await test.allowed();
    expect(allowed).toMatchObject({ id: pending!.id, decision: 'allow-once' });
    expect(allowed!.retryUntil).toBeGreaterThan(Date.now());
    expect(runs(marker)).toBe(0);
    const ran = await client.callTool({ name: 'system.run', arguments: args });
    expect(ran.isError ?? false).toBe(false);
    expect(ran.structuredContent).toMatchObject({ stdout: '42\n' });
    expect(runs(marker)).toBe(1);
    expect(await test.allowed()).toEqual([]);

    // Exactly once: the next identical call asks again.
    const next = await client.callTool({ name: 'system.run', arguments: args });
    expect(next.isError).toBe(true);
    expect(runs(marker)).toBe(1);
    const [second] = await test.pending();
    expect(second!.id).not.toBe(pending!.id);
    expect(await test.answer(second!, 'deny')).toBe(200);
    const denied = await client.callTool({ name: 'system.run', arguments: args });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/denied by the user/);
    expect(runs(marker)).toBe(1);
  });

  it('a real SDK client without a progress token, answered within the hold, gets the result in one call', async () => {
    await using test = await startTestHost();
    const marker = join(test.home, 'runs.txt');
    await using client = await connectV1(test.url, test.mcpToken, 'plain-v1');
    const call = client.callTool({ name: 'system.run', arguments: countingRun(marker) });
    const pending = await nextPending(test);
    expect(await test.answer(pending, 'allow-once')).toBe(200);
    const result = await call;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ stdout: '42\n' });
    expect(runs(marker)).toBe(1);
    expect(await test.pending()).toEqual([]);
  });

  it('a hold that ends unanswered returns approval_pending naming the dashboard page and the CLI', async () => {
    await using test = await startTestHost({ settings: { approvals: { holdMs: 300 } } });
    await using client = await connectV1(test.url, test.mcpToken, 'plain-v1');
    const started = Date.now();
    const result = await client.callTool({ name: 'system.run', arguments: countingRun(join(test.home, 'runs.txt')) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(result.isError).toBe(true);
    const [pending] = await test.pending();
    expect(textOf(result)).toContain('Approvals page of the capnode dashboard');
    expect(textOf(result)).toContain(`capnode approvals allow ${pending!.id}`);
  });

  it('over initialize-era (2025) HTTP a real SDK v2 client that declares elicitation gets the question through its session, and its answer runs the call once', async () => {
    await using test = await startTestHost();
    const marker = join(test.home, 'session-runs.txt');
    const client = new ClientV2({ name: 'eliciting-http', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const questions: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: 'accept', content: { decision: 'allow-once' } };
    });
    const transport = new HttpTransportV2(new URL(test.url), { requestInit: { headers: { authorization: `Bearer ${test.mcpToken}` } } });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toEqual(expect.any(String));
      const result = await client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', `require('fs').appendFileSync(${JSON.stringify(marker)}, 'x')`] } });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(questions).toHaveLength(1);
      expect(questions[0]).toContain('system.run');
      expect(runs(marker)).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('over HTTP (2026-07-28) a real SDK v2 client that declares elicitation gets the question as input_required and its answer runs the call once', async () => {
    await using test = await startTestHost();
    const marker = join(test.home, 'runs.txt');
    const client = new ClientV2(
      { name: 'eliciting-modern', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const questions: string[] = [];
    let decision = 'allow-once';
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: 'accept', content: { decision } };
    });
    await client.connect(new HttpTransportV2(new URL(test.url), { requestInit: { headers: { authorization: `Bearer ${test.mcpToken}` } } }));
    try {
      const result = await client.callTool({ name: 'system.run', arguments: countingRun(marker) });
      expect(result.isError ?? false, textOf(result)).toBe(false);
      expect(result.structuredContent).toMatchObject({ stdout: '42\n' });
      expect(runs(marker)).toBe(1);
      expect(questions).toHaveLength(1);
      expect(questions[0]).toContain('transport: mcp-http');
      expect(questions[0]).toContain('caller: eliciting-modern (self-reported)');
      expect(await test.pending()).toEqual([]);
      decision = 'deny';
      const denied = await client.callTool({ name: 'system.run', arguments: countingRun(marker) });
      expect(denied.isError).toBe(true);
      expect(textOf(denied)).toMatch(/denied by the user/);
      expect(runs(marker)).toBe(1);
    } finally {
      await client.close();
    }
  });
});
