import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { createMcpToolsSlot } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { startHttpServer } from '@capnode/mcp-server/node';
import { expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';

test("capnode's own local MCP server: imported tools are re-exported under the same names and policy", async () => {
  const registry = createRegistry([
    defineCapability({ category: 'clock', commands: [defineCommand({ name: 'clock.now', description: 'Current time.', execute: () => 'tick' })] }),
  ]);
  const invoker = createInvoker({ registry, hooks: [createMcpToolsSlot()] });
  // The host imports a fixture server's tools into its own pipeline, minus one excluded tool ...
  await using imported = await createMcpRuntime(grantAll([fixtureServer('fx')], { autonomy: 'full', excluded_tools: ['fx__crash'] }), { agent: 'test', invoker, logger: memoryLogger() });
  const token = 'host-token-0123456789';
  await using server = await startHttpServer({ invoker, port: 0, token });

  // ... and a second client reaches everything through the host's one hardened endpoint.
  await using client = await createMcpRuntime(grantAll([{ name: 'capnode', url: server.url, headers: { Authorization: `Bearer ${token}` } }]), { agent: 'test', logger: memoryLogger() });
  expect(client.diagnostics()[0]).toMatchObject({ state: 'connected', transport: 'http' });
  const names = Object.keys(await client.tools());
  expect(names).toEqual(expect.arrayContaining(['capnode__clock-now', 'capnode__fx__echo']));
  expect(names).not.toContain('capnode__fx__crash');
  expect(textOf(await client.call('capnode__fx__echo', { text: 'through the host' }))).toBe('through the host');
  expect(textOf(await client.call('capnode__clock-now'))).toBe('tick');

  await using refused = await createMcpRuntime(grantAll([{ name: 'capnode', url: server.url }]), { agent: 'test', logger: memoryLogger() });
  expect(refused.diagnostics()[0]!.state).toBe('failed');
  expect(imported.diagnostics()[0]!.state).toBe('connected');
});
