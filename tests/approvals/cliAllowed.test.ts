import { join } from 'node:path';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { repoRoot, runCli } from '../cli/helpers.js';
import { nextPending, startTestHost } from './helpers.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client, StreamableHTTPClientTransport } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

it('capnode status and capnode approvals list show an answer allowed for a retry, as the dashboard does', async () => {
  await using test = await startTestHost({ settings: { approvals: { wait: 'return', notify: false } } });
  const client = new Client({ name: 'retrying-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(test.url), { requestInit: { headers: { Authorization: `Bearer ${test.mcpToken}` } } }));
  try {
    const first = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)'] } });
    const pending = await nextPending(test);
    await first;
    expect(await test.answer(pending, 'allow-once')).toBe(200);
    expect((await test.allowed()).map((approval) => approval.id)).toEqual([pending.id]);

    const listed = await runCli(['approvals', 'list'], test.home);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('no pending approvals');
    expect(listed.stdout).toMatch(new RegExp(`${pending.id}  .*allowed — runs when the agent retries \\(\\d+ s left\\)`));
    const json = await runCli(['approvals', 'list', '--json'], test.home);
    expect(JSON.parse(json.stdout)).toMatchObject({ approvals: [], allowed: [{ id: pending.id, decision: 'allow-once' }] });

    const status = await runCli(['status'], test.home);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/pending:\s+none/);
    expect(status.stdout).toMatch(new RegExp(`${pending.id}  .*allowed — runs when the agent retries \\(\\d+ s left\\)`));
  } finally {
    await client.close();
  }
}, 60_000);
