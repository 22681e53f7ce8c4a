import type { ProgressUpdate } from '@capnode/capabilities';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import type { Progress } from '@modelcontextprotocol/client';
import { createMcpToolsSlot } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { expect, test } from 'vitest';
import { everythingServer } from '../support/mcpServers.js';
import { contentServer, grantAll, memoryLogger, textOf } from './helpers.js';
import { connectHostClient } from './hostClient.js';

const LONG = 'everything__trigger-long-running-operation';
const args = { duration: 0.3, steps: 3 };

test('call takes onProgress: the request carries a progress token and every report arrives before the result', async () => {
  await using runtime = await createMcpRuntime(grantAll([everythingServer()]), { agent: 'test', logger: memoryLogger() });
  const updates: ProgressUpdate[] = [];
  const result = await runtime.call(LONG, args, { onProgress: (update) => updates.push(update) });
  expect(textOf(result)).toMatch(/Long running operation completed/);
  expect(updates).toEqual([
    { progress: 1, total: 3 },
    { progress: 2, total: 3 },
    { progress: 3, total: 3 },
  ]);
  const tool = (await runtime.tools())[LONG]!;
  const viaTool: ProgressUpdate[] = [];
  await tool.execute(args, { onProgress: (update) => viaTool.push(update) });
  expect(viaTool).toHaveLength(3);
  // Without onProgress no token is sent (the server reports nothing) and the call works the same.
  expect(textOf(await runtime.call(LONG, args))).toMatch(/completed/);
});

test("the host forwards an imported tool's progress to its own MCP client", async () => {
  const invoker = createInvoker({ registry: createRegistry(), hooks: [createMcpToolsSlot()] });
  await using imported = await createMcpRuntime(grantAll([everythingServer()]), { agent: 'test', invoker, logger: memoryLogger() });
  expect(imported.diagnostics()[0]!.state).toBe('connected');
  await using client = await connectHostClient(invoker, 'progress-test');
  const seen: Progress[] = [];
  const result = await client.callTool({ name: LONG, arguments: args }, { onprogress: (progress) => seen.push(progress) });
  expect(JSON.stringify(result.content)).toMatch(/completed/);
  expect(seen.map((progress) => [progress.progress, progress.total])).toEqual([
    [1, 3],
    [2, 3],
    [3, 3],
  ]);
});

test('reports written in the same read as the result still arrive; messages are scrubbed, bad numbers dropped', async () => {
  await using runtime = await createMcpRuntime(grantAll([contentServer()]), { agent: 'test', logger: memoryLogger() });
  for (let round = 0; round < 5; round += 1) {
    const updates: ProgressUpdate[] = [];
    expect(textOf(await runtime.call('cx__progress-burst', {}, { onProgress: (update) => updates.push(update) }))).toBe('burst');
    expect(updates).toEqual([
      { progress: 1, total: 3, message: 'step with [redacted]' },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  }
  expect(textOf(await runtime.call('cx__progress-burst'))).toBe('no token');
});
