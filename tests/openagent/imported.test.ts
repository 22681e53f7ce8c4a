import { describe, expect, it } from 'vitest';
import { everythingServer } from '../support/mcpServers.js';
import { startOpenAgentHost } from '../support/openAgentHost.js';
import { eventually } from '../support/poll.js';

type Server = { name: string; tools: { name: string; classification?: string }[] };

/** The catalog the bridge last received: the latest catalog update, else the hello. */
function latestCatalog(oa: Awaited<ReturnType<typeof startOpenAgentHost>>): Server[] {
  const update = oa.bridge.framesOf('capability_catalog_update').at(-1) ?? oa.bridge.framesOf('capability_hello').at(-1);
  return (update?.servers ?? []) as Server[];
}

describe('OpenAgent channel: imported MCP servers', () => {
  it('offers an imported server as its own catalog server and runs its tools', async () => {
    await using oa = await startOpenAgentHost({
      settings: { mcpClient: { reexport: true, servers: [everythingServer('everything')], risk_profiles: { capnode: { autonomy: 'full' } } } },
    });
    await oa.bridge.hello(1);
    const everything = await eventually(() => latestCatalog(oa).find((server) => server.name === 'everything'), { what: 'the imported server in the catalog', timeoutMs: 30_000 });
    expect(everything.tools.map((tool) => tool.name)).toContain('echo');
    expect(latestCatalog(oa).find((server) => server.name === 'capnode')?.tools.some((tool) => tool.name.startsWith('everything__'))).toBe(false);
    const call = await oa.bridge.call('echo', { message: 'from openagent' }, { server: 'everything' });
    const result = await oa.bridge.result(call.call_id as string);
    expect(JSON.stringify(result.result)).toContain('from openagent');
  }, 60_000);

  it('leaves out imported servers that openagent.servers does not list', async () => {
    await using oa = await startOpenAgentHost({
      openagent: { servers: ['capnode'] },
      settings: { mcpClient: { reexport: true, servers: [everythingServer('everything')], risk_profiles: { capnode: { autonomy: 'full' } } } },
    });
    await oa.bridge.hello(1);
    await eventually(() => oa.host.status().mcpClient.state === 'ready', { what: 'imports ready', timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(latestCatalog(oa).map((server) => server.name)).toEqual(['capnode']);
    const call = await oa.bridge.call('echo', { message: 'x' }, { server: 'everything' });
    expect(await oa.bridge.result(call.call_id as string)).toMatchObject({ error: { code: 'tool_not_found' } });
  }, 60_000);
});
