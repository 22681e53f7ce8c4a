import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { gatewayNodeDeclaration, toInvokeResult } from '@capnode/gateway-bridge';
import { describe, expect, it } from 'vitest';
import { cliPath, completion, runCli, spawnCli, startServe, tempHome } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';
import { startTestHost } from '../support/testHost.js';

// The gateway transport goes through the same invoker; packages/capabilities/src/consent.test.ts
// covers transport 'gateway' (and every other) at the pipeline level.

const plugin = fileURLToPath(new URL('./fixtures/consentPlugin.mjs', import.meta.url));
const OFF = 'screen access is off: turn it on with `capnode consent set screen ask` (or allow)';

function failureCode(result: unknown): string | undefined {
  return ((result as { _meta?: Record<string, { code?: string }> })._meta?.['capnode/failure'])?.code;
}
const textOf = (result: unknown) => ((result as { content: { text: string }[] }).content[0]!.text);

describe('consent on every transport', () => {
  it('MCP HTTP (SDK v2 client): off refuses, ask goes through the broker, allow-always records a grant, a CLI change applies to the next call', async () => {
    await using t = await startTestHost({ settings: { plugins: [plugin] }, host: { builtinPlugins: false } });
    const off = await t.client.callTool({ name: 'probe.look', arguments: {} });
    expect(failureCode(off)).toBe('consent_required');
    expect(textOf(off)).toBe(OFF);
    expect(t.asked).toHaveLength(0);

    expect((await runCli(['consent', 'set', 'screen', 'ask'], t.home)).code).toBe(0);
    t.answerWith('allow-always');
    const asked = await t.client.callTool({ name: 'probe.look', arguments: { why: 'line\u001b[2J' } });
    expect(textOf(asked)).toBe('looked {"why":"line\\u001b[2J"}');
    expect(t.asked).toHaveLength(1);
    expect(t.asked[0]).toMatchObject({ command: 'probe.look', transport: 'mcp-http', caller: 'security-test' });
    expect(t.asked[0]!.summary).toBe('probe.look asks for screen access with {"why":"line\\u001b[2J"}');
    expect(JSON.parse(readFileSync(join(t.home, 'settings.json'), 'utf8')).consent.allowed).toEqual([{ command: 'probe.look', category: 'screen' }]);
    t.answerWith(undefined);
    expect(textOf(await t.client.callTool({ name: 'probe.look', arguments: {} }))).toBe('looked {}');
    expect(t.asked).toHaveLength(1);

    expect((await runCli(['consent', 'set', 'screen', 'off'], t.home)).code).toBe(0);
    expect(failureCode(await t.client.callTool({ name: 'probe.look', arguments: {} }))).toBe('consent_required');
  });

  it('MCP HTTP (SDK v1 client): a consent ask answered after the client timeout still returns, progress resetting the timeout', { timeout: 30_000 }, async () => {
    await using t = await startTestHost({ settings: { plugins: [plugin], consent: { screen: 'ask' } }, host: { builtinPlugins: false, approvalProgressIntervalMs: 200 } });
    const token = readFileSync(join(t.home, 'mcp-token'), 'utf8').trim();
    const client = new ClientV1({ name: 'patient-v1', version: '1.0.0' });
    await client.connect(new HttpTransportV1(new URL(t.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const progress: { message?: string | undefined }[] = [];
      const started = Date.now();
      // The SDK's 60 s default timeout, scaled down: 1.5 s, reset by each progress report.
      const call = client.callTool({ name: 'probe.look', arguments: { slow: true } }, undefined, {
        timeout: 1500,
        resetTimeoutOnProgress: true,
        onprogress: (update) => progress.push(update),
      });
      const pending = await eventually(() => t.asked[0], { what: 'the consent request' });
      await new Promise((resolve) => setTimeout(resolve, 4000 - (Date.now() - started)));
      expect(t.host.approvals.resolve(pending.id, 'allow-once')).toBe(true);
      const result = await call;
      expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
      expect(textOf(result)).toBe('looked {"slow":true}');
      expect(progress.length).toBeGreaterThanOrEqual(5);
      expect(progress[0]!.message).toContain(`capnode approvals allow ${pending.id}`);
    } finally {
      await client.close();
    }
  });

  it('MCP stdio (capnode mcp, SDK v2 client): off refuses; allow runs', async () => {
    using temp = tempHome();
    writeFileSync(join(temp.home, 'settings.json'), JSON.stringify({ plugins: [plugin] }), { mode: 0o600 });
    const client = new Client({ name: 'consent-stdio', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: temp.home }, stderr: 'pipe' }));
    try {
      const off = await client.callTool({ name: 'probe.look', arguments: {} });
      expect(failureCode(off)).toBe('consent_required');
      expect(textOf(off)).toBe(OFF);
      expect((await runCli(['consent', 'set', 'screen', 'allow'], temp.home)).code).toBe(0);
      expect(textOf(await client.callTool({ name: 'probe.look', arguments: {} }))).toBe('looked {}');
    } finally {
      await client.close();
    }
  });

  it('MCP stdio: ask puts the question to a client that elicits; its answer decides', async () => {
    using temp = tempHome();
    writeFileSync(join(temp.home, 'settings.json'), JSON.stringify({ plugins: [plugin], consent: { screen: 'ask' } }), { mode: 0o600 });
    const client = new Client({ name: 'consent-eliciting', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const questions: string[] = [];
    let answer = 'allow-once';
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: 'accept', content: { decision: answer } };
    });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: temp.home, PATH: '/nonexistent-no-notify-send' }, stderr: 'pipe' }));
    try {
      expect(textOf(await client.callTool({ name: 'probe.look', arguments: { q: 1 } }))).toBe('looked {"q":1}');
      expect(questions).toHaveLength(1);
      expect(questions[0]).toContain('probe.look: probe.look asks for screen access with {"q":1}');
      expect(questions[0]).toContain('transport: mcp-stdio');
      answer = 'deny';
      const denied = await client.callTool({ name: 'probe.look', arguments: { q: 2 } });
      expect(failureCode(denied)).toBe('denied');
    } finally {
      await client.close();
    }
  });

  it('CLI (capnode --command): off fails with the message; ask waits in capnode approvals until allowed', async () => {
    using temp = tempHome();
    writeFileSync(join(temp.home, 'settings.json'), JSON.stringify({ plugins: [plugin] }), { mode: 0o600 });
    await using serve = await startServe(temp.home);
    const off = await runCli(['--command', 'probe.look'], temp.home);
    expect(off.code).toBe(1);
    expect(off.stderr).toContain(OFF);

    expect((await runCli(['consent', 'set', 'screen', 'ask'], temp.home)).code).toBe(0);
    const call = spawnCli(['--command', 'probe.look', '--params', '{"n":1}'], temp.home);
    call.stdin.end();
    const done = completion(call);
    const pending = await eventually(async () => {
      const listed = await runCli(['approvals', 'list', '--json'], temp.home);
      return (JSON.parse(listed.stdout).approvals as { id: string; command: string; transport: string }[])[0];
    }, { what: 'the consent request in capnode approvals' });
    expect(pending).toMatchObject({ command: 'probe.look' });
    const text = await runCli(['approvals', 'list'], temp.home);
    expect(text.stdout).toContain('probe.look: probe.look asks for screen access with {"n":1}');
    expect((await runCli(['approvals', 'allow', pending.id], temp.home)).code).toBe(0);
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('looked {"n":1}');
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
  }, 60_000);

  it('gateway: the node declaration leaves unavailable commands out, and a gateway invoke meets consent in the host pipeline', async () => {
    const unavailable = fileURLToPath(new URL('./fixtures/contextPlugin.mjs', import.meta.url));
    await using t = await startTestHost({ settings: { plugins: [plugin, unavailable] }, host: { builtinPlugins: false, availabilityTimeoutMs: 200 } });
    const declared = gatewayNodeDeclaration(t.host.registry).commands;
    expect(declared).toContain('probe.look');
    expect(declared).toContain('ctx.greet');
    expect(declared).not.toContain('ctx.gone');
    // The node transport hands gateway invokes to this invoker with transport 'gateway'.
    const outcome = await t.host.invoker.invoke({ command: 'probe.look', args: {}, transport: 'gateway', caller: 'gateway-node' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'consent_required', message: OFF } });
    // What the node answers the gateway (the gateway helper maps consent_required to PERMISSION_REQUIRED).
    expect(toInvokeResult('invoke-1', 'node-1', outcome)).toMatchObject({ ok: false, error: { message: OFF } });
  });
});
