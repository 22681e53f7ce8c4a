import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { createMcpToolsSlot, HOST_MARKER_CAPABILITY } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { startHttpServer } from '@capnode/mcp-server/node';
import { expect, test } from 'vitest';
import { grantAll, memoryLogger } from './helpers.js';

const TOKEN = 'self-import-token-0123456789';

function hostInvoker(commands = 1) {
  const registry = createRegistry([
    defineCapability({
      category: 'clock',
      commands: Array.from({ length: commands }, (_, index) => defineCommand({ name: `clock.t${index}`, description: 'A tick.', execute: () => 'tick' })),
    }),
  ]);
  return createInvoker({ registry, hooks: [createMcpToolsSlot()] });
}

test('a server that declares this host instance is refused at connect with self_host, and never retried', async () => {
  const invoker = hostInvoker();
  await using server = await startHttpServer({ invoker, port: 0, token: TOKEN, experimentalCapabilities: { [HOST_MARKER_CAPABILITY]: { instance: 'host-a' } } });
  const logger = memoryLogger();
  const config = grantAll([{ name: 'loop', url: server.url, headers: { Authorization: `Bearer ${TOKEN}` } }]);
  await using runtime = await createMcpRuntime(config, { agent: 'test', invoker, hostInstance: 'host-a', logger });
  expect(runtime.diagnostics()[0]).toMatchObject({ server: 'loop', state: 'failed', errorCode: 'self_host', toolCount: 0 });
  expect(runtime.diagnostics()[0]!.error).toMatch(/this capnode host itself.*capnode servers remove loop/);
  expect(invoker.registry.commands().filter((command) => command.category === 'mcp')).toEqual([]);
  const call = await runtime.call('loop__clock-t0', {}).catch((error: Error) => error);
  expect(String((call as Error).message ?? JSON.stringify(call))).not.toMatch(/next connection attempt/);

  // Another host (another instance id) imports it as usual: the marker is no general ban.
  await using other = await createMcpRuntime(config, { agent: 'test', hostInstance: 'host-b', logger: memoryLogger() });
  expect(other.diagnostics()[0]).toMatchObject({ state: 'connected', toolCount: 1 });
});

test("an entry that is this host's URL or `capnode mcp` is refused before anything starts", async () => {
  const logger = memoryLogger();
  const config = grantAll([
    { name: 'byurl', url: 'http://localhost:48765/mcp' },
    { name: 'bycmd', command: 'npx', args: ['-y', 'capnode', 'mcp'] },
  ]);
  await using runtime = await createMcpRuntime(config, { agent: 'test', hostIdentity: { ports: [48765], home: '/nonexistent/capnode' }, logger });
  for (const diagnostic of runtime.diagnostics()) expect(diagnostic).toMatchObject({ state: 'failed', errorCode: 'self_host' });
  expect(logger.text()).toMatch(/mcp server 'bycmd' refused: it runs capnode's own stdio server/);
});

test('a loop that hides the marker (a proxy) stays bounded: the per-server cap stops the nesting, with a warning', async () => {
  // The host's own endpoint without the marker re-serves what the runtime imports from it: every
  // listing adds a `loop__loop__…` generation until the cap holds it.
  const invoker = hostInvoker(3);
  await using server = await startHttpServer({ invoker, port: 0, token: TOKEN });
  const logger = memoryLogger();
  await using runtime = await createMcpRuntime(grantAll([{ name: 'loop', url: server.url, headers: { Authorization: `Bearer ${TOKEN}` } }]), {
    agent: 'test',
    invoker,
    logger,
    maxTools: { perServer: 20 },
  });
  const imported = () => invoker.registry.commands().filter((command) => command.category === 'mcp').length;
  const deadline = Date.now() + 4_000;
  let peak = 0;
  while (Date.now() < deadline) {
    await runtime.refresh().catch(() => {});
    peak = Math.max(peak, imported());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(peak).toBeGreaterThan(3);
  expect(peak).toBeLessThanOrEqual(20);
  expect(runtime.warnings.join('\n')).toMatch(/server 'loop' lists \d+ tools; only the first 20 are imported/);
});

test('the total cap holds across servers and names the servers cut', async () => {
  const first = await startHttpServer({ invoker: hostInvoker(8), port: 0, token: TOKEN });
  const second = await startHttpServer({ invoker: hostInvoker(8), port: 0, token: TOKEN });
  try {
    const headers = { Authorization: `Bearer ${TOKEN}` };
    await using runtime = await createMcpRuntime(grantAll([{ name: 'a', url: first.url, headers }, { name: 'b', url: second.url, headers }]), {
      agent: 'test',
      logger: memoryLogger(),
      maxTools: { perServer: 6, total: 10 },
    });
    expect(runtime.toolNames()).toHaveLength(10);
    expect(runtime.warnings.join('\n')).toMatch(/server 'b': 2 tools not imported: the catalog holds at most 10 imported tools/);
  } finally {
    await first.close();
    await second.close();
  }
});
