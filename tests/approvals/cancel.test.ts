import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';
import { capnodeStdioTransport } from '../support/stdioClient.js';
import { nextPending, startTestHost, type TestHost } from './helpers.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client, StreamableHTTPClientTransport } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

type SdkClient = InstanceType<typeof Client>;

async function httpClient(test: TestHost): Promise<{ client: SdkClient; stderr: () => string }> {
  const client = new Client({ name: 'cancelling-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(test.url), { requestInit: { headers: { Authorization: `Bearer ${test.mcpToken}` } } }));
  return { client, stderr: () => '' };
}

async function relayedClient(test: TestHost): Promise<{ client: SdkClient; stderr: () => string }> {
  const { transport, stderr } = capnodeStdioTransport(cliPath, test.home);
  const client = new Client({ name: 'cancelling-stdio', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr };
}

const SLEEP = [process.execPath, '-e', 'setTimeout(() => console.log("done"), 30000)'];

describe.each([
  ['HTTP', httpClient],
  ['the stdio relay (capnode mcp)', relayedClient],
] as const)("a client's cancel over %s is not logged as an error", (_, connect) => {
  it('cancelling a call that waits for its approval, and a long system.run that runs', async () => {
    await using test = await startTestHost({ settings: { approvals: { wait: 'block', notify: false } } });
    const { client, stderr } = await connect(test);
    try {
      // 1. Cancelled while its approval is pending: the request leaves the queue.
      const waiting = new AbortController();
      const pendingCall = client.callTool({ name: 'system.run', arguments: { command: SLEEP } }, { signal: waiting.signal }).catch((error: unknown) => error);
      const pending = await nextPending(test);
      waiting.abort();
      expect(await pendingCall).toBeInstanceOf(Error);
      await eventually(async () => ((await test.pending()).some((approval) => approval.id === pending.id) ? undefined : true));

      // 2. Cancelled while the approved command runs.
      const running = new AbortController();
      const runCall = client.callTool({ name: 'system.run', arguments: { command: SLEEP } }, { signal: running.signal }).catch((error: unknown) => error);
      const second = await nextPending(test);
      expect(await test.answer(second, 'allow-once')).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 500));
      running.abort();
      expect(await runCall).toBeInstanceOf(Error);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The connection still serves.
      expect((await client.callTool({ name: 'app.status', arguments: {} })).isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
    expect(test.logs.filter((line) => line.startsWith('error'))).toEqual([]);
    expect(stderr()).not.toMatch(/error/i);
  }, 60_000);
});
