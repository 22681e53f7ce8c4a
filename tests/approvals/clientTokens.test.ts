// Clients named by their token: `capnode token add|revoke|list` against a running host, calls of two
// clients attributed to their tokens' names (not the names the clients report), and the old
// single token still authenticating as `default`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';
import { startTestHost, type TestHost } from './helpers.js';

async function connectV1(url: string, token: string, name: string): Promise<ClientV1 & AsyncDisposable> {
  const client = new ClientV1({ name, version: '1.0.0' });
  await client.connect(new HttpTransportV1(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

async function connectV2(url: string, token: string, name: string): Promise<ClientV2 & AsyncDisposable> {
  const client = new ClientV2({ name, version: '1.0.0' });
  await client.connect(new HttpTransportV2(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** `capnode token add <name>` against the test host's config directory: the token it prints once. */
async function addToken(test: TestHost, name: string): Promise<string> {
  const result = await runCli(['token', 'add', name], test.home);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toContain(`the running host at ${test.url} accepts '${name}'`);
  return result.stdout.trim();
}

/** A sessionless `tools/list` POST carrying `token`: the HTTP status. */
async function statusWith(url: string, token: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await response.text();
  return response.status;
}

function auditLines(test: TestHost): Array<Record<string, unknown>> {
  let text = '';
  try {
    text = readFileSync(test.host.paths.auditLog, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const RUN = { command: [process.execPath, '-e', 'console.log(6*7)'] };

describe('clients named by their token', () => {
  it('two clients with two named tokens: the pending approvals and the audit lines carry each token\'s name, not the self-reported one', { timeout: 60_000 }, async () => {
    await using test = await startTestHost({ settings: { approvals: { holdMs: 10_000 } } });
    const alpha = await addToken(test, 'alpha');
    const beta = await addToken(test, 'beta');
    expect(alpha).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await using first = await connectV1(test.url, alpha, 'says-it-is-beta');
    await using second = await connectV2(test.url, beta, 'says-it-is-alpha');

    const calls = [first.callTool({ name: 'system.run', arguments: RUN }), second.callTool({ name: 'system.run', arguments: RUN })];
    const pending = await eventually(async () => {
      const list = await test.pending();
      return list.length === 2 ? list : undefined;
    }, { what: 'two pending approvals', timeoutMs: 15_000, intervalMs: 50 });
    const byClient = new Map(pending.map((approval) => [approval.client, approval]));
    expect(byClient.get('alpha')?.caller).toBe('says-it-is-beta');
    expect(byClient.get('beta')?.caller).toBe('says-it-is-alpha');
    // The summary every prompt shows names the token first; the self-reported name stays as detail.
    const dashboard = await (await import('../../packages/host/src/parts/dashboard/routes/approvals.js')).toPendingView(byClient.get('alpha')!);
    expect(dashboard.client).toBe('alpha');
    expect(dashboard.summary).toContain("client: alpha (its token's name)");
    expect(dashboard.summary).toContain('caller: says-it-is-beta (self-reported)');

    for (const approval of pending) expect(await test.answer(approval, 'deny')).toBe(200);
    await Promise.all(calls);
    const runs = await eventually(() => {
      const lines = auditLines(test).filter((line) => line.command === 'system.run');
      return lines.length === 2 ? lines : undefined;
    }, { what: 'two system.run audit lines', timeoutMs: 10_000, intervalMs: 50 });
    expect(runs.map((line) => [line.client, line.caller]).sort()).toEqual([
      ['alpha', 'says-it-is-beta'],
      ['beta', 'says-it-is-alpha'],
    ]);

    const listed = await runCli(['token', 'list', '--json'], test.home);
    const tokens = (JSON.parse(listed.stdout) as { tokens: Array<{ name: string; lastUsed?: string }> }).tokens;
    expect(tokens.map((token) => token.name)).toEqual(['default', 'alpha', 'beta']);
    expect(listed.stdout).not.toContain(alpha);
    expect(listed.stdout).not.toContain(test.mcpToken);
    await eventually(async () => {
      const again = JSON.parse((await runCli(['token', 'list', '--json'], test.home)).stdout) as { tokens: Array<{ name: string; lastUsed?: string }> };
      return again.tokens.find((token) => token.name === 'alpha')?.lastUsed;
    }, { what: "alpha's last use", timeoutMs: 10_000, intervalMs: 100 });
  });

  it('a revoked token gets 401 at once on the running host; the others keep working', { timeout: 60_000 }, async () => {
    await using test = await startTestHost();
    const gone = await addToken(test, 'gone');
    const kept = await addToken(test, 'kept');
    expect(await statusWith(test.url, gone)).toBe(200);
    const revoked = await runCli(['token', 'revoke', 'gone'], test.home);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain("refuses 'gone' from now on");
    expect(await statusWith(test.url, gone)).toBe(401);
    expect(await statusWith(test.url, kept)).toBe(200);
    expect(await statusWith(test.url, test.mcpToken)).toBe(200);
    const missing = await runCli(['token', 'revoke', 'gone'], test.home);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no token named 'gone'");
    const fallback = await runCli(['token', 'revoke', 'default'], test.home);
    expect(fallback.code).toBe(2);
    expect(fallback.stderr).toContain('capnode token rotate');
  });

  it('the old single token file still authenticates, as `default`', { timeout: 60_000 }, async () => {
    await using test = await startTestHost();
    await using client = await connectV1(test.url, test.mcpToken, 'old-config');
    await client.callTool({ name: 'system.which', arguments: { bins: ['node'] } });
    const line = await eventually(() => auditLines(test).find((entry) => entry.command === 'system.which'), { what: 'the audit line', timeoutMs: 10_000, intervalMs: 50 });
    expect(line).toMatchObject({ client: 'default', caller: 'old-config' });
  });

  it('an entry of mcp-tokens.json the host refuses is named in the host log (never its token); the first of a name is the one accepted', { timeout: 60_000 }, async () => {
    await using test = await startTestHost();
    const created = '2026-01-01T00:00:00.000Z';
    const [first, second] = ['F'.repeat(43), 'S'.repeat(43)];
    writeFileSync(join(test.home, 'mcp-tokens.json'), JSON.stringify({ version: 1, tokens: [{ name: 'dup', token: first, created }, { name: 'dup', token: second, created }, { name: 7, token: 'N'.repeat(43), created }] }), { mode: 0o600 });
    await addToken(test, 'fresh');
    const log = test.logs.join('\n');
    expect(log).toMatch(/warning: .*mcp-tokens\.json: entry 2 \("dup"\) repeats the name of entry 1; only the first entry of a name is accepted/);
    expect(log).toMatch(/warning: .*mcp-tokens\.json: entry 3 \(no name\) has no valid name/);
    for (const secret of [first, second, 'N'.repeat(43)]) expect(log).not.toContain(secret);
    expect(await statusWith(test.url, first)).toBe(200);
    expect(await statusWith(test.url, second)).toBe(401);
  });
});
